#!/usr/bin/perl
# Renames the identifiers quiver 0.5 changed (CHANGELOG.md, "0.5.0"), in place:
#   perl scripts/rename-0.5.pl FILE...
# For programs written against 0.4: it rewrites whole words only and is safe to
# run twice. What it cannot do by itself (new parameters: options pointers, the
# builders' QvError, the merged enums' members) the compiler then points at.
use strict;
use warnings;

my %map = (
  # one spelling for equality, counts and sizes
  qv_tensor_equals => 'qv_tensor_equal',
  qv_sparse_equals => 'qv_sparse_equal',
  qv_sparse_equals_dense => 'qv_sparse_equal_dense',
  qv_rb_file_num_batches => 'qv_rb_file_n_batches',
  qv_rb_file_num_dictionaries => 'qv_rb_file_n_dictionaries',
  qv_tensor_size => 'qv_tensor_n_elements',
  qv_tensor_column_type_cell_size => 'qv_tensor_column_type_cell_n_elements',
  qv_tensor_message_size => 'qv_tensor_write_size',
  qv_sparse_message_size => 'qv_sparse_write_size',
  # tensor <-> tensor column, one family
  qv_tensor_unstack => 'qv_tensor_column_unstack',
  # the C Data Interface's ArrowSchema (qv_arrow_*) apart from the IPC QvSchema (qv_schema_*)
  qv_schema_view_init => 'qv_arrow_schema_view_init',
  QvSchemaView => 'QvArrowSchemaView',
  qv_schema_validate => 'qv_arrow_schema_validate',
  qv_schema_init => 'qv_arrow_schema_init',
  qv_schema_alloc_dictionary => 'qv_arrow_schema_alloc_dictionary',
  qv_schema_add_metadata => 'qv_arrow_schema_add_metadata',
  qv_schema_set_metadata => 'qv_arrow_schema_set_metadata',
  qv_schema_copy => 'qv_arrow_schema_copy',
  QvMetadataIter => 'QvArrowMetadataIter',
  qv_metadata_iter_init => 'qv_arrow_metadata_iter_init',
  qv_metadata_iter_next => 'qv_arrow_metadata_iter_next',
  qv_metadata_size => 'qv_arrow_metadata_size',
  qv_metadata_get => 'qv_arrow_metadata_get',
  # one free for memory the library hands out
  qv_aligned_free => 'qv_free',
  # one type enum: the tensor value types are QvArrowType's numeric members
  QvValueType => 'QvArrowType',
  QV_VALUE_DEFAULT => 'QV_ARROW_NONE',
  QV_ARROW_UNINITIALIZED => 'QV_ARROW_NONE',
  QV_VALUE_INT8 => 'QV_ARROW_INT8', QV_VALUE_INT16 => 'QV_ARROW_INT16',
  QV_VALUE_INT32 => 'QV_ARROW_INT32', QV_VALUE_INT64 => 'QV_ARROW_INT64',
  QV_VALUE_UINT8 => 'QV_ARROW_UINT8', QV_VALUE_UINT16 => 'QV_ARROW_UINT16',
  QV_VALUE_UINT32 => 'QV_ARROW_UINT32', QV_VALUE_UINT64 => 'QV_ARROW_UINT64',
  QV_VALUE_FLOAT16 => 'QV_ARROW_FLOAT16', QV_VALUE_FLOAT32 => 'QV_ARROW_FLOAT32',
  QV_VALUE_FLOAT64 => 'QV_ARROW_FLOAT64',
  QV_ARROW_HALF_FLOAT => 'QV_ARROW_FLOAT16', QV_ARROW_FLOAT => 'QV_ARROW_FLOAT32',
  QV_ARROW_DOUBLE => 'QV_ARROW_FLOAT64',
  QV_VALUE_TYPE_COUNT => 'QV_ARROW_NUMERIC_END',
  qv_value_type_size => 'qv_arrow_type_size',
  qv_value_type_name => 'qv_arrow_type_name',
  qv_value_type_parse => 'qv_arrow_type_parse',
  # one endianness enum (QV_ENDIAN_NATIVE is 0; the spec's numbers are mapped by the codec)
  QV_RB_ENDIAN_NATIVE => 'QV_ENDIAN_NATIVE',
  QV_RB_ENDIAN_LITTLE => 'QV_ENDIAN_LITTLE',
  QV_RB_ENDIAN_BIG => 'QV_ENDIAN_BIG',
  # one sparse-kind enum: metadata says QvSparseFormat too
  qv_sparse_index_name => 'qv_sparse_format_name',
  QV_SPARSE_INDEX_COO => 'QV_SPARSE_COO',
  QV_SPARSE_INDEX_CSF => 'QV_SPARSE_CSF',
);

# Internal functions of 0.4 that shared the public prefix: qv_X -> qvi_X. The
# list is the 0.4 library's own (a program never called these).
my @internal = qw(
qv_add_i64 qv_add_size qv_arena_alloc qv_arena_free qv_arena_new qv_arena_strndup 
qv_array_alloc_node qv_bit_get qv_bit_set qv_bitmap_bytes qv_builder_free qv_codec_background 
qv_codec_fail_after qv_codec_run qv_codec_runner_free qv_codec_runner_new qv_codec_runner_threads 
qv_codec_set_parallel_min qv_codec_submit qv_codec_wait qv_copy_deinterleave qv_copy_interleave 
qv_copy_large qv_cpu_features qv_cpu_has qv_cpu_override qv_desc_ qv_double_to_half 
qv_errpath_clear qv_errpath_pop qv_errpath_push qv_fb_add_bool qv_fb_add_f32 qv_fb_add_f64 
qv_fb_add_i16 qv_fb_add_i32 qv_fb_add_i64 qv_fb_add_i8 qv_fb_add_ref qv_fb_add_scalar 
qv_fb_add_struct qv_fb_add_u16 qv_fb_add_u32 qv_fb_add_u64 qv_fb_add_u8 qv_fb_bool 
qv_fb_builder_init qv_fb_builder_reset qv_fb_create_string qv_fb_create_struct_vector 
qv_fb_create_vector qv_fb_create_vector_refs qv_fb_f32 qv_fb_f64 qv_fb_field_pos qv_fb_finish 
qv_fb_has qv_fb_i16 qv_fb_i32 qv_fb_i64 qv_fb_i8 qv_fb_root qv_fb_string qv_fb_struct qv_fb_table 
qv_fb_table_end qv_fb_table_start qv_fb_table_valid qv_fb_u16 qv_fb_u32 qv_fb_u64 qv_fb_u8 
qv_fb_vec_at qv_fb_vec_f64 qv_fb_vec_i16 qv_fb_vec_i32 qv_fb_vec_i64 qv_fb_vec_string 
qv_fb_vec_table qv_fb_vec_u8 qv_fb_vector qv_fb_verify qv_growbuf_append qv_growbuf_append_zeros 
qv_growbuf_free qv_growbuf_reserve qv_half_to_double qv_i64_to_size qv_idmap_free qv_idmap_get 
qv_idmap_put qv_ij_compare_range qv_ij_dictionary_nodes qv_ij_has_validity qv_ij_negate_words 
qv_ij_same_type qv_ij_valid qv_ipc_source_nth qv_ld_ qv_ld_bits qv_ld_f32 qv_ld_f64 qv_ld_i16 
qv_ld_i32 qv_ld_i64 qv_ld_i8 qv_ld_int qv_ld_offset qv_ld_u16 qv_ld_u32 qv_ld_u64 qv_ld_u8 qv_le_ 
qv_le_bytes qv_le_i32 qv_le_i64 qv_le_u16 qv_le_u32 qv_le_u64 qv_metadata_version_check 
qv_move_down_large qv_mul_add_i64 qv_mul_i64 qv_mul_size qv_npy_header_parse qv_npy_host_big_endian 
qv_npy_magic qv_npy_read_bytes qv_npy_read_bytes_ex qv_npy_read_source qv_npy_write_header 
qv_offsets_monotonic qv_options_load qv_path_count qv_path_hit qv_path_hits qv_pool_done 
qv_pool_free qv_pool_new qv_pool_run qv_pool_submit qv_pool_threads qv_pool_wait 
qv_rb_host_endianness qv_rb_swap_copy qv_rb_swap_kind qv_rb_swap_kinds qv_recycler_allow 
qv_recycler_close qv_recycler_get qv_recycler_new qv_recycler_put qv_recycler_release 
qv_recycler_retain qv_sink_reserve qv_sink_room qv_sink_unreserve qv_sink_window 
qv_source_count_populates qv_source_count_range_maps qv_source_count_view_maps 
qv_source_error_prefix qv_source_expect_full_read qv_source_get_advice qv_source_has_view 
qv_source_is_mapped qv_source_kind qv_source_map_range qv_source_peek qv_source_populate 
qv_source_populate_supported qv_source_position qv_source_pread qv_source_read 
qv_source_seekable qv_source_set_advice qv_source_size qv_source_skip qv_source_view qv_sp_begin 
qv_sp_build qv_sp_calloc qv_sp_csx_emit qv_sp_csx_flip qv_sp_csx_free qv_sp_csx_from_dense 
qv_sp_csx_from_dense_across qv_sp_csx_from_sparse qv_sp_csx_orientation qv_sp_csx_own 
qv_sp_csx_transpose qv_sp_entries_free qv_sp_entries_from_dense qv_sp_entries_from_sparse 
qv_sp_entries_sort qv_sp_finish_csx qv_sp_first_too_big qv_sp_fit_error qv_sp_free qv_sp_group_coo 
qv_sp_group_csx qv_sp_index_ld qv_sp_index_max qv_sp_index_str qv_sp_init_pool qv_sp_int64_view 
qv_sp_is_index_type qv_sp_malloc qv_sp_narrow qv_sp_nomem qv_sp_options qv_sp_own qv_sp_point_csf 
qv_sp_produce qv_sp_realloc qv_sp_reserve qv_sp_scan_vec_i64 qv_sp_scan_vec_u32 qv_sp_seal 
qv_sp_sealed qv_sp_validate qv_sp_validate_pool qv_sp_value_add qv_sp_value_equal qv_sp_ws_enter 
qv_sp_ws_leave qv_sp_zero_mask qv_st_ qv_st_bits qv_st_le_ qv_st_le_u16 qv_st_le_u32 qv_st_le_u64 
qv_st_u16 qv_st_u32 qv_st_u64 qv_tensor_column_kind_name qv_tensor_column_set_names 
qv_tensor_copy_pool qv_tensor_copy_tasks qv_tensor_copy_to_pool qv_tensor_equals_tiles 
qv_tensor_load_double qv_tensor_message_frame qv_tensor_message_init qv_tensor_value_format 
qv_tensor_value_from_format qv_utf8_classify qv_utf8_valid qv_v2i64 qv_v2u64 qv_v4i32 
qv_value_type_from_arrow qv_value_type_to_arrow qv_view_layout qv_walk_init qv_zero_block 
qv_zip_central_entry qv_zip_close qv_zip_end_records qv_zip_entry_name qv_zip_local_header 
qv_zip_open 
);
for my $name (@internal) {
  (my $rest = $name) =~ s/^qv_//;
  $map{$name} = "qvi_$rest" unless exists $map{$name};
}
# The CLI's own functions are the program's, not the library's.
# Token-pasted families (qv_desc_##name, qv_ld_##type, ...).
my $pasted = qr/\bqv_(desc|ld|le|st)_(\w+)/;
my $cli = qr/\bqv_cli_(\w+)/;

my $words = join '|', map { quotemeta } sort { length($b) <=> length($a) } keys %map;
my $re = qr/\b($words)\b/;

for my $file (@ARGV) {
  open my $in, '<', $file or die "$file: $!";
  local $/;
  my $text = <$in>;
  close $in;
  my $new = $text;
  $new =~ s/$re/$map{$1}/g;
  $new =~ s/$cli/cli_$1/g;
  $new =~ s/$pasted/qvi_$1_$2/g;
  next if $new eq $text;
  open my $out, '>', "$file.tmp" or die "$file.tmp: $!";
  print $out $new;
  close $out or die "$file.tmp: $!";
  rename "$file.tmp", $file or die "$file: $!";
}

// Messages built with the apache-arrow builders for quiver to decode. The
// values deliberately differ from quiver's own samples (qv_metadata_tool.c):
// other parameters, absent optional parts, explicit defaults, empty vectors.
const field = (name, type, { nullable = true, children = [], dictionary = null, customMetadata = [] } = {}) => ({
  name,
  nullable,
  type,
  dictionary,
  children,
  customMetadata,
});
const int = (bitWidth, isSigned) => ({ name: 'Int', bitWidth, isSigned });
// An Int table outside the Type union (index types): no name.
const index = (bitWidth, isSigned) => ({ bitWidth, isSigned });
const fp = (precision) => ({ name: 'FloatingPoint', precision });
const t = (name, params = {}) => ({ name, ...params });
const buf = (offset, length) => ({ offset: String(offset), length: String(length) });
const kv = (key, value) => ({ key, value });
const dim = (size, name) => ({ size: String(size), name });
const V4 = 3;
const V5 = 4;

const typesSchema = {
  endianness: 0,
  fields: [
    field('a_u8', int(8, false), { nullable: false, customMetadata: [kv('scale', '0.5'), kv('ünïcödé', 'ok')] }),
    field('a_i16', int(16, true)),
    field('a_u32', int(32, false)),
    field('a_i64', int(64, true), { nullable: false }),
    field('half', fp(0)),
    field('single', fp(1)),
    field('double', fp(2), { nullable: false }),
    field('dec32', t('Decimal', { precision: 5, scale: 3, bitWidth: 32 })),
    field('dec64', t('Decimal', { precision: 15, scale: -2, bitWidth: 64 })),
    field('dec128', t('Decimal', { precision: 20, scale: 20, bitWidth: 128 })),
    field('dec256', t('Decimal', { precision: 50, scale: 7, bitWidth: 256 })),
    field('date_ms', t('Date', { unit: 1 })),
    field('date_day', t('Date', { unit: 0 })),
    field('time_us', t('Time', { unit: 2, bitWidth: 64 })),
    field('time_ms', t('Time', { unit: 1, bitWidth: 32 })),
    field('ts_ny', t('Timestamp', { unit: 1, timezone: 'America/New_York' })),
    field('ts_utc', t('Timestamp', { unit: 3, timezone: 'UTC' })),
    field('ts_local', t('Timestamp', { unit: 2, timezone: null })),
    field('iv_mdn', t('Interval', { unit: 2 })),
    field('iv_ym', t('Interval', { unit: 0 })),
    field('dur_us', t('Duration', { unit: 2 })),
    field('dur_s', t('Duration', { unit: 0 })),
    field('text', t('Utf8')),
    field('blob', t('Binary')),
    field('flag', t('Bool'), { nullable: false }),
    field('nothing', t('Null')),
    field('big_text', t('LargeUtf8')),
    field('big_blob', t('LargeBinary')),
    field('blob_view', t('BinaryView')),
    field('text_view', t('Utf8View')),
    field('points', t('List'), {
      children: [field('point', t('Struct_'), { children: [field('x', fp(2)), field('y', fp(2))] })],
    }),
    field('dates', t('LargeList'), { children: [field('d', t('Date', { unit: 0 }))] }),
    field('triple', t('FixedSizeList', { listSize: 3 }), { children: [field('e', int(16, true), { nullable: false })] }),
    field('uuid', t('FixedSizeBinary', { byteWidth: 4 })),
    field('lookup', t('Map', { keysSorted: false }), {
      children: [
        field('entries', t('Struct_'), {
          nullable: false,
          children: [field('key', int(32, true), { nullable: false }), field('value', t('Utf8View'))],
        }),
      ],
    }),
    field('sparse_u', t('Union', { mode: 0, typeIds: [1, 2] }), {
      children: [field('m1', int(8, true)), field('m2', t('Bool'))],
    }),
    field('dense_u', t('Union', { mode: 1, typeIds: null }), {
      children: [field('n1', fp(1)), field('n2', t('LargeUtf8'))],
    }),
    field('empty_u', t('Union', { mode: 1, typeIds: [] })),
    field('runs', t('RunEndEncoded'), {
      children: [
        field('run_ends', int(64, true), { nullable: false }),
        field('values', t('Decimal', { precision: 12, scale: 4, bitWidth: 128 })),
      ],
    }),
    field('views', t('ListView'), { children: [field('v', fp(0))] }),
    field('big_views', t('LargeListView'), { children: [field('w', t('Utf8'))] }),
    field('', int(8, true)),
    field(null, t('Bool')),
  ],
  customMetadata: [kv('built-by', 'apache-arrow fb builders'), kv('n', '42')],
  features: ['1'],
};

// Every scalar equal to its schema default, written explicitly, and every
// vector present even when empty.
const defaultsSchema = {
  endianness: 0,
  fields: [
    field('unsigned32', int(32, false), { nullable: false }),
    field('dec', t('Decimal', { precision: 1, scale: 0, bitWidth: 128 })),
    field('date', t('Date', { unit: 1 })),
    field('time', t('Time', { unit: 1, bitWidth: 32 })),
    field('ts', t('Timestamp', { unit: 0, timezone: null })),
    field('dur', t('Duration', { unit: 1 })),
    field('iv', t('Interval', { unit: 0 })),
    field('map', t('Map', { keysSorted: false }), {
      children: [
        field('entries', t('Struct_'), {
          nullable: false,
          children: [field('key', t('Utf8'), { nullable: false }), field('value', t('Null'))],
        }),
      ],
    }),
    field('union', t('Union', { mode: 0, typeIds: null })),
    field('fsb0', t('FixedSizeBinary', { byteWidth: 0 })),
    field('fsl0', t('FixedSizeList', { listSize: 0 }), { children: [field('z', t('Bool'))] }),
    field('dict0', t('Utf8'), {
      dictionary: { id: '0', indexType: null, isOrdered: false, dictionaryKind: 0 },
    }),
  ],
  customMetadata: [],
  features: [],
};

const dictionarySchema = {
  endianness: 1,
  fields: [
    field('city', t('Utf8'), {
      dictionary: { id: '5', indexType: index(32, false), isOrdered: true, dictionaryKind: 0 },
    }),
    field('max_id', t('LargeBinary'), {
      nullable: false,
      dictionary: { id: '9223372036854775807', indexType: index(8, true), isOrdered: false, dictionaryKind: 0 },
    }),
    field('Ωmega 🚀', t('Struct_'), {
      children: [
        field('implicit_index', fp(2), {
          dictionary: { id: '6', indexType: null, isOrdered: true, dictionaryKind: 0 },
          customMetadata: [kv('tab\there', 'quote " backslash \\ nul \u0000 end')],
        }),
      ],
    }),
  ],
  customMetadata: [kv('', ''), kv('only-key', null), kv(null, 'only-value')],
  features: ['2', '1'],
};

const recordBatchLz4 = {
  length: '123456789012',
  nodes: [
    { length: '123456789012', nullCount: '12' },
    { length: '4', nullCount: '4' },
  ],
  buffers: [buf(0, 0), buf(8, 16), buf(24, '9007199254740995')],
  // LZ4_FRAME and BUFFER are the defaults: the builder writes an empty table.
  compression: { codec: 0, method: 0 },
  variadicBufferCounts: ['3', '1'],
};

export const jsSamples = [
  {
    name: 'js_schema_types',
    message: { version: V5, bodyLength: '0', customMetadata: [kv('from', 'node')], headerType: 'Schema', header: typesSchema },
  },
  {
    name: 'js_schema_forced_defaults',
    options: { forceDefaults: true, omitEmpty: false },
    message: { version: V5, bodyLength: '0', customMetadata: [], headerType: 'Schema', header: defaultsSchema },
  },
  {
    name: 'js_schema_dictionary',
    message: { version: V4, bodyLength: '0', customMetadata: [kv('a', '1'), kv('b', '2')], headerType: 'Schema', header: dictionarySchema },
  },
  {
    name: 'js_record_batch_lz4',
    message: { version: V5, bodyLength: '9007199254741000', customMetadata: [], headerType: 'RecordBatch', header: recordBatchLz4 },
  },
  {
    name: 'js_record_batch_minimal',
    message: {
      version: V5,
      bodyLength: '0',
      customMetadata: [kv('empty', 'batch')],
      headerType: 'RecordBatch',
      header: { length: '0', nodes: [], buffers: [], compression: null, variadicBufferCounts: null },
    },
  },
  {
    name: 'js_dictionary_batch',
    message: {
      version: V5,
      bodyLength: '256',
      customMetadata: [],
      headerType: 'DictionaryBatch',
      header: {
        id: '1234567890123',
        data: {
          length: '2',
          nodes: [{ length: '2', nullCount: '0' }],
          buffers: [buf(0, 0), buf(0, 24), buf(64, 100)],
          compression: { codec: 1, method: 0 },
          variadicBufferCounts: [],
        },
        isDelta: false,
      },
    },
  },
  {
    name: 'js_dictionary_batch_delta',
    message: {
      version: V4,
      bodyLength: '24',
      customMetadata: [],
      headerType: 'DictionaryBatch',
      header: {
        id: '7',
        data: {
          length: '1',
          nodes: [{ length: '1', nullCount: '1' }],
          buffers: [buf(0, 8), buf(8, 8), buf(16, 8)],
          compression: null,
          variadicBufferCounts: null,
        },
        isDelta: true,
      },
    },
  },
  {
    name: 'js_tensor_i32',
    message: {
      version: V5,
      bodyLength: '320',
      customMetadata: [],
      headerType: 'Tensor',
      header: { type: int(32, true), shape: [dim(6, 'h'), dim(8, null)], strides: ['32', '4'], data: buf(128, 192) },
    },
  },
  {
    name: 'js_tensor_f16',
    message: {
      version: V5,
      bodyLength: '24',
      customMetadata: [kv('layout', 'NCHW')],
      headerType: 'Tensor',
      header: {
        type: fp(0),
        shape: [dim(1, 'n'), dim(3, 'c'), dim(2, null), dim(2, 'w')],
        strides: null,
        data: buf(0, 24),
      },
    },
  },
  {
    name: 'js_sparse_coo',
    message: {
      version: V5,
      bodyLength: '160',
      customMetadata: [],
      headerType: 'SparseTensor',
      header: {
        type: int(64, false),
        shape: [dim('1000000000000', 'rows'), dim(3, 'cols')],
        nonZeroLength: '4',
        sparseIndexType: 'SparseTensorIndexCOO',
        sparseIndex: { indicesType: index(32, true), indicesStrides: null, indicesBuffer: buf(64, 32), isCanonical: false },
        data: buf(128, 32),
      },
    },
  },
  {
    name: 'js_sparse_csr',
    message: {
      version: V5,
      bodyLength: '168',
      customMetadata: [],
      headerType: 'SparseTensor',
      header: {
        type: fp(2),
        shape: [dim(4, null), dim(6, null)],
        nonZeroLength: '5',
        sparseIndexType: 'SparseMatrixIndexCSX',
        // Row is the default axis: the builder leaves the field out.
        sparseIndex: {
          compressedAxis: 0,
          indptrType: index(64, true),
          indptrBuffer: buf(0, 40),
          indicesType: index(64, true),
          indicesBuffer: buf(64, 40),
        },
        data: buf(128, 40),
      },
    },
  },
  {
    name: 'js_sparse_csc',
    message: {
      version: V5,
      bodyLength: '192',
      customMetadata: [],
      headerType: 'SparseTensor',
      header: {
        type: t('Decimal', { precision: 10, scale: 2, bitWidth: 128 }),
        shape: [dim(7, 'r'), dim(3, 'c')],
        nonZeroLength: '6',
        sparseIndexType: 'SparseMatrixIndexCSX',
        sparseIndex: {
          compressedAxis: 1,
          indptrType: index(32, false),
          indptrBuffer: buf(0, 16),
          indicesType: index(8, true),
          indicesBuffer: buf(64, 6),
        },
        data: buf(128, 96),
      },
    },
  },
  {
    name: 'js_sparse_csf',
    message: {
      version: V5,
      bodyLength: '384',
      customMetadata: [],
      headerType: 'SparseTensor',
      header: {
        type: fp(1),
        shape: [dim(2, 'i'), dim(3, 'j'), dim(4, 'k')],
        nonZeroLength: '6',
        sparseIndexType: 'SparseTensorIndexCSF',
        sparseIndex: {
          indptrType: index(32, true),
          indptrBuffers: [buf(0, 12), buf(64, 20)],
          indicesType: index(16, true),
          indicesBuffers: [buf(128, 4), buf(192, 8), buf(256, 12)],
          axisOrder: [0, 1, 2],
        },
        data: buf(320, 24),
      },
    },
  },
];

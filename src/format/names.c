/* Display names for the format's enums and types. */
#include <stdio.h>

#include "quiver/format.h"

const char *qv_header_type_name(QvMessageHeader header_type) {
  static const char *const names[] = {"NONE", "Schema", "DictionaryBatch", "RecordBatch",
                                      "Tensor", "SparseTensor"};
  return (unsigned)header_type < 6 ? names[header_type] : "?";
}

const char *qv_type_id_name(QvTypeId id) {
  static const char *const names[QV_TYPE_ID_COUNT] = {
      "NONE",      "Null",           "Int",         "FloatingPoint", "Binary",
      "Utf8",      "Bool",           "Decimal",     "Date",          "Time",
      "Timestamp", "Interval",       "List",        "Struct_",       "Union",
      "FixedSizeBinary", "FixedSizeList", "Map",    "Duration",      "LargeBinary",
      "LargeUtf8", "LargeList",      "RunEndEncoded", "BinaryView",  "Utf8View",
      "ListView",  "LargeListView"};
  return (unsigned)id < QV_TYPE_ID_COUNT ? names[id] : "?";
}

const char *qv_metadata_version_name(QvMetadataVersion version) {
  static const char *const names[] = {"V1", "V2", "V3", "V4", "V5"};
  return (unsigned)version < 5 ? names[version] : "?";
}

static const char *time_unit_abbrev(int16_t unit) {
  static const char *const names[] = {"s", "ms", "us", "ns"};
  return unit >= 0 && unit < 4 ? names[unit] : "?";
}

char *qv_type_describe(const QvType *t, char *buf, size_t size) {
  switch (t->id) {
    case QV_TYPE_NULL: snprintf(buf, size, "null"); break;
    case QV_TYPE_INT:
      snprintf(buf, size, "%sint%d", t->u.int_.is_signed ? "" : "u", t->u.int_.bit_width);
      break;
    case QV_TYPE_FLOATING_POINT: {
      static const char *const names[] = {"float16", "float32", "float64"};
      int p = t->u.floating_point.precision;
      snprintf(buf, size, "%s", p >= 0 && p < 3 ? names[p] : "float?");
      break;
    }
    case QV_TYPE_BINARY: snprintf(buf, size, "binary"); break;
    case QV_TYPE_UTF8: snprintf(buf, size, "utf8"); break;
    case QV_TYPE_BOOL: snprintf(buf, size, "bool"); break;
    case QV_TYPE_DECIMAL:
      snprintf(buf, size, "decimal%d(%d, %d)", t->u.decimal.bit_width, t->u.decimal.precision,
               t->u.decimal.scale);
      break;
    case QV_TYPE_DATE:
      snprintf(buf, size, "date%s", t->u.date.unit == QV_DATE_DAY ? "32[day]" : "64[ms]");
      break;
    case QV_TYPE_TIME:
      snprintf(buf, size, "time%d[%s]", t->u.time.bit_width, time_unit_abbrev(t->u.time.unit));
      break;
    case QV_TYPE_TIMESTAMP:
      if (t->u.timestamp.timezone)
        snprintf(buf, size, "timestamp[%s, tz=%s]", time_unit_abbrev(t->u.timestamp.unit),
                 t->u.timestamp.timezone);
      else
        snprintf(buf, size, "timestamp[%s]", time_unit_abbrev(t->u.timestamp.unit));
      break;
    case QV_TYPE_INTERVAL: {
      static const char *const names[] = {"year_month", "day_time", "month_day_nano"};
      int u = t->u.interval.unit;
      snprintf(buf, size, "interval[%s]", u >= 0 && u < 3 ? names[u] : "?");
      break;
    }
    case QV_TYPE_LIST: snprintf(buf, size, "list"); break;
    case QV_TYPE_STRUCT: snprintf(buf, size, "struct"); break;
    case QV_TYPE_UNION:
      snprintf(buf, size, "%s_union", t->u.union_.mode == QV_UNION_DENSE ? "dense" : "sparse");
      break;
    case QV_TYPE_FIXED_SIZE_BINARY:
      snprintf(buf, size, "fixed_size_binary[%d]", t->u.fixed_size_binary.byte_width);
      break;
    case QV_TYPE_FIXED_SIZE_LIST:
      snprintf(buf, size, "fixed_size_list[%d]", t->u.fixed_size_list.list_size);
      break;
    case QV_TYPE_MAP: snprintf(buf, size, "map%s", t->u.map.keys_sorted ? "[sorted]" : ""); break;
    case QV_TYPE_DURATION:
      snprintf(buf, size, "duration[%s]", time_unit_abbrev(t->u.duration.unit));
      break;
    case QV_TYPE_LARGE_BINARY: snprintf(buf, size, "large_binary"); break;
    case QV_TYPE_LARGE_UTF8: snprintf(buf, size, "large_utf8"); break;
    case QV_TYPE_LARGE_LIST: snprintf(buf, size, "large_list"); break;
    case QV_TYPE_RUN_END_ENCODED: snprintf(buf, size, "run_end_encoded"); break;
    case QV_TYPE_BINARY_VIEW: snprintf(buf, size, "binary_view"); break;
    case QV_TYPE_UTF8_VIEW: snprintf(buf, size, "utf8_view"); break;
    case QV_TYPE_LIST_VIEW: snprintf(buf, size, "list_view"); break;
    case QV_TYPE_LARGE_LIST_VIEW: snprintf(buf, size, "large_list_view"); break;
    default: snprintf(buf, size, "?"); break;
  }
  return buf;
}

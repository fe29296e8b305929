/* The integration JSON module: reading every type, round trips (JSON ->
 * arrays -> JSON), slices, gzip, the comparison catching each kind of
 * difference, and hostile input failing with the JSON path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <libdeflate.h>

#include "test_util.h"
#include "util/load.h"
#include "quiver/array.h"
#include "quiver/integration_json.h"
#include "quiver/io.h"
#include "quiver/recordbatch_ipc.h"
#include <jansson.h>

/* Every type the record batch layer supports, with nulls, two fields sharing
 * dictionary 0, a nested dictionary (1 = list<dictionary 0>), field and
 * schema metadata, an extension field, out-of-range decimal / date64 / time
 * values, and a second, empty batch. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverlength-strings" /* one JSON document, 14 kB */
#endif
static const char k_all_types[] =
    "{\"schema\":{\"fields\":[{\"name\":\"n\",\"nullable\":true,\"type\":{\"name\":\"null\"},\"children\""
    ":[]},{\"name\":\"b\",\"nullable\":true,\"type\":{\"name\":\"bool\"},\"children\":[]},{\"name\":\"i8\""
    ",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":true},\"children\":[]},{\""
    "name\":\"u16\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":16,\"isSigned\":false},\"ch"
    "ildren\":[]},{\"name\":\"i32\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSign"
    "ed\":true},\"children\":[],\"metadata\":[{\"key\":\"k1\",\"value\":\"v1\"},{\"key\":\"k1\",\"value\""
    ":\"dup\"}]},{\"name\":\"i64\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":64,\"isSigne"
    "d\":true},\"children\":[]},{\"name\":\"u64\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth"
    "\":64,\"isSigned\":false},\"children\":[]},{\"name\":\"f16\",\"nullable\":true,\"type\":{\"name\":\""
    "floatingpoint\",\"precision\":\"HALF\"},\"children\":[]},{\"name\":\"f32\",\"nullable\":true,\"type\""
    ":{\"name\":\"floatingpoint\",\"precision\":\"SINGLE\"},\"children\":[]},{\"name\":\"f64\",\"nullable"
    "\":true,\"type\":{\"name\":\"floatingpoint\",\"precision\":\"DOUBLE\"},\"children\":[]},{\"name\":\""
    "d32\",\"nullable\":true,\"type\":{\"name\":\"decimal\",\"precision\":9,\"scale\":2,\"bitWidth\":32},"
    "\"children\":[]},{\"name\":\"d64\",\"nullable\":true,\"type\":{\"name\":\"decimal\",\"precision\":18"
    ",\"scale\":3,\"bitWidth\":64},\"children\":[]},{\"name\":\"d128\",\"nullable\":true,\"type\":{\"name"
    "\":\"decimal\",\"precision\":3,\"scale\":2},\"children\":[]},{\"name\":\"d256\",\"nullable\":true,\""
    "type\":{\"name\":\"decimal\",\"precision\":76,\"scale\":0,\"bitWidth\":256},\"children\":[]},{\"name"
    "\":\"dt32\",\"nullable\":true,\"type\":{\"name\":\"date\",\"unit\":\"DAY\"},\"children\":[]},{\"name"
    "\":\"dt64\",\"nullable\":true,\"type\":{\"name\":\"date\",\"unit\":\"MILLISECOND\"},\"children\":[]}"
    ",{\"name\":\"t32\",\"nullable\":true,\"type\":{\"name\":\"time\",\"unit\":\"SECOND\",\"bitWidth\":32"
    "},\"children\":[]},{\"name\":\"t64\",\"nullable\":true,\"type\":{\"name\":\"time\",\"unit\":\"NANOSE"
    "COND\",\"bitWidth\":64},\"children\":[]},{\"name\":\"ts\",\"nullable\":true,\"type\":{\"name\":\"tim"
    "estamp\",\"unit\":\"MICROSECOND\",\"timezone\":\"Europe/Paris\"},\"children\":[]},{\"name\":\"ts0\","
    "\"nullable\":true,\"type\":{\"name\":\"timestamp\",\"unit\":\"SECOND\"},\"children\":[]},{\"name\":\""
    "dur\",\"nullable\":true,\"type\":{\"name\":\"duration\",\"unit\":\"MILLISECOND\"},\"children\":[]},{"
    "\"name\":\"iym\",\"nullable\":true,\"type\":{\"name\":\"interval\",\"unit\":\"YEAR_MONTH\"},\"childr"
    "en\":[]},{\"name\":\"idt\",\"nullable\":true,\"type\":{\"name\":\"interval\",\"unit\":\"DAY_TIME\"},"
    "\"children\":[]},{\"name\":\"imdn\",\"nullable\":true,\"type\":{\"name\":\"interval\",\"unit\":\"MON"
    "TH_DAY_NANO\"},\"children\":[]},{\"name\":\"bin\",\"nullable\":true,\"type\":{\"name\":\"binary\"},\""
    "children\":[]},{\"name\":\"str\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[]},{\""
    "name\":\"lbin\",\"nullable\":true,\"type\":{\"name\":\"largebinary\"},\"children\":[]},{\"name\":\"l"
    "str\",\"nullable\":true,\"type\":{\"name\":\"largeutf8\"},\"children\":[]},{\"name\":\"bv\",\"nullab"
    "le\":true,\"type\":{\"name\":\"binaryview\"},\"children\":[]},{\"name\":\"sv\",\"nullable\":true,\"t"
    "ype\":{\"name\":\"utf8view\"},\"children\":[]},{\"name\":\"fsb\",\"nullable\":true,\"type\":{\"name\""
    ":\"fixedsizebinary\",\"byteWidth\":3},\"children\":[],\"metadata\":[{\"key\":\"ARROW:extension:name\""
    ",\"value\":\"my.ext\"},{\"key\":\"ARROW:extension:metadata\",\"value\":\"\"}]},{\"name\":\"lst\",\"n"
    "ullable\":true,\"type\":{\"name\":\"list\"},\"children\":[{\"name\":\"item\",\"nullable\":true,\"typ"
    "e\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]}]},{\"name\":\"llst\",\"nul"
    "lable\":true,\"type\":{\"name\":\"largelist\"},\"children\":[{\"name\":\"item\",\"nullable\":true,\""
    "type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]}]},{\"name\":\"lv\",\"nu"
    "llable\":true,\"type\":{\"name\":\"listview\"},\"children\":[{\"name\":\"item\",\"nullable\":true,\""
    "type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]}]},{\"name\":\"llv\",\"n"
    "ullable\":true,\"type\":{\"name\":\"largelistview\"},\"children\":[{\"name\":\"item\",\"nullable\":t"
    "rue,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]}]},{\"name\":\"fsl"
    "\",\"nullable\":true,\"type\":{\"name\":\"fixedsizelist\",\"listSize\":2},\"children\":[{\"name\":\""
    "item\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":"
    "[]}]},{\"name\":\"st\",\"nullable\":true,\"type\":{\"name\":\"struct\"},\"children\":[{\"name\":\"a\""
    ",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]},{\""
    "name\":\"\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[]}]},{\"name\":\"mp\",\"nul"
    "lable\":true,\"type\":{\"name\":\"map\",\"keysSorted\":false},\"children\":[{\"name\":\"entries\",\""
    "nullable\":false,\"type\":{\"name\":\"struct\"},\"children\":[{\"name\":\"key\",\"nullable\":false,\""
    "type\":{\"name\":\"utf8\"},\"children\":[]},{\"name\":\"value\",\"nullable\":true,\"type\":{\"name\""
    ":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]}]}]},{\"name\":\"su\",\"nullable\":false"
    ",\"type\":{\"name\":\"union\",\"mode\":\"SPARSE\",\"typeIds\":[5,7]},\"children\":[{\"name\":\"x\",\""
    "nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]},{\"na"
    "me\":\"y\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[]}]},{\"name\":\"du\",\"null"
    "able\":false,\"type\":{\"name\":\"union\",\"mode\":\"DENSE\",\"typeIds\":[42,43]},\"children\":[{\"n"
    "ame\":\"x\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"childr"
    "en\":[]},{\"name\":\"y\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[]}]},{\"name\""
    ":\"ree\",\"nullable\":false,\"type\":{\"name\":\"runendencoded\"},\"children\":[{\"name\":\"run_ends"
    "\",\"nullable\":false,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]}"
    ",{\"name\":\"values\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[]}]},{\"name\":\""
    "dict\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[],\"dictionary\":{\"id\":0,\"ind"
    "exType\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":true},\"isOrdered\":false}},{\"name\":\"dict2"
    "\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[],\"dictionary\":{\"id\":0,\"indexTy"
    "pe\":{\"name\":\"int\",\"bitWidth\":16,\"isSigned\":true},\"isOrdered\":true}},{\"name\":\"ndict\",\""
    "nullable\":true,\"type\":{\"name\":\"list\"},\"children\":[{\"name\":\"item\",\"nullable\":true,\"ty"
    "pe\":{\"name\":\"utf8\"},\"children\":[],\"dictionary\":{\"id\":0,\"indexType\":{\"name\":\"int\",\""
    "bitWidth\":32,\"isSigned\":true},\"isOrdered\":false}}],\"dictionary\":{\"id\":1,\"indexType\":{\"na"
    "me\":\"int\",\"bitWidth\":8,\"isSigned\":true},\"isOrdered\":false}}],\"metadata\":[{\"key\":\"schem"
    "a_key\",\"value\":\"schema value\"}]},\"dictionaries\":[{\"id\":0,\"data\":{\"count\":6,\"columns\":"
    "[{\"name\":\"DICT0\",\"count\":6,\"VALIDITY\":[1,1,0,1,1,1],\"OFFSET\":[0,1,2,2,3,4,5],\"DATA\":[\"a"
    "\",\"b\",\"\",\"c\",\"d\",\"e\"]}]}},{\"id\":1,\"data\":{\"count\":2,\"columns\":[{\"name\":\"DICT1\""
    ",\"count\":2,\"VALIDITY\":[1,1],\"OFFSET\":[0,2,3],\"children\":[{\"name\":\"item\",\"count\":3,\"VA"
    "LIDITY\":[1,1,0],\"DATA\":[0,3,1]}]}]}}],\"batches\":[{\"count\":3,\"columns\":[{\"name\":\"n\",\"co"
    "unt\":3},{\"name\":\"b\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[true,false,true]},{\"name\":\"i8"
    "\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[-128,0,127]},{\"name\":\"u16\",\"count\":3,\"VALIDITY\""
    ":[1,0,1],\"DATA\":[0,7,65535]},{\"name\":\"i32\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[-2147483"
    "648,5,2147483647]},{\"name\":\"i64\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[\"-92233720368547758"
    "08\",\"0\",\"9223372036854775807\"]},{\"name\":\"u64\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[\""
    "0\",\"1\",\"18446744073709551615\"]},{\"name\":\"f16\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[1."
    "5,0.0,-65504.0]},{\"name\":\"f32\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[1.25,0.0,-3.5]},{\"nam"
    "e\":\"f64\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[0.1,2.0,-1e+300]},{\"name\":\"d32\",\"count\""
    ":3,\"VALIDITY\":[1,0,1],\"DATA\":[\"-999999999\",\"0\",\"12345\"]},{\"name\":\"d64\",\"count\":3,\"V"
    "ALIDITY\":[1,0,1],\"DATA\":[\"-1\",\"0\",\"999999999999999999\"]},{\"name\":\"d128\",\"count\":3,\"V"
    "ALIDITY\":[1,0,1],\"DATA\":[\"-11697\",\"0\",\"170141183460469231731687303715884105727\"]},{\"name\""
    ":\"d256\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[\"-57896044618658097711785492504343953926634992"
    "332820282019728792003956564819968\",\"1\",\"57896044618658097711785492504343953926634992332820282019"
    "728792003956564819967\"]},{\"name\":\"dt32\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[-1,0,19000]}"
    ",{\"name\":\"dt64\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[\"1\",\"0\",\"-86400001\"]},{\"name\""
    ":\"t32\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[-5,0,90000]},{\"name\":\"t64\",\"count\":3,\"VAL"
    "IDITY\":[1,0,1],\"DATA\":[\"-1\",\"0\",\"100000000000000\"]},{\"name\":\"ts\",\"count\":3,\"VALIDITY"
    "\":[1,0,1],\"DATA\":[\"-1\",\"0\",\"1700000000000000\"]},{\"name\":\"ts0\",\"count\":3,\"VALIDITY\":"
    "[1,0,1],\"DATA\":[\"0\",\"1\",\"2\"]},{\"name\":\"dur\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[\""
    "-7\",\"0\",\"7\"]},{\"name\":\"iym\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[-12,0,13]},{\"name\""
    ":\"idt\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[{\"days\":1,\"milliseconds\":-2},{\"days\":0,\"m"
    "illiseconds\":0},{\"days\":-2147483648,\"milliseconds\":2147483647}]},{\"name\":\"imdn\",\"count\":3"
    ",\"VALIDITY\":[1,0,1],\"DATA\":[{\"months\":1,\"days\":2,\"nanoseconds\":9223372036854775807},{\"mon"
    "ths\":0,\"days\":0,\"nanoseconds\":0},{\"months\":-1,\"days\":-2,\"nanoseconds\":-922337203685477580"
    "8}]},{\"name\":\"bin\",\"count\":3,\"VALIDITY\":[1,0,1],\"OFFSET\":[0,2,2,6],\"DATA\":[\"00FF\",\"\""
    ",\"DEADBEEF\"]},{\"name\":\"str\",\"count\":3,\"VALIDITY\":[1,0,1],\"OFFSET\":[0,6,6,14],\"DATA\":[\""
    "héllo\",\"\",\"a\\\"b\\\\c\\n\\u0000z\"]},{\"name\":\"lbin\",\"count\":3,\"VALIDITY\":[1,0,1],\"OFFS"
    "ET\":[\"0\",\"1\",\"1\",\"1\"],\"DATA\":[\"01\",\"\",\"\"]},{\"name\":\"lstr\",\"count\":3,\"VALIDIT"
    "Y\":[1,0,1],\"OFFSET\":[\"0\",\"1\",\"1\",\"3\"],\"DATA\":[\"x\",\"\",\"yz\"]},{\"name\":\"bv\",\"co"
    "unt\":3,\"VALIDITY\":[1,0,1],\"VIEWS\":[{\"SIZE\":2,\"INLINED\":\"ABCD\"},{\"SIZE\":0,\"INLINED\":\""
    "\"},{\"SIZE\":13,\"PREFIX_HEX\":\"00010203\",\"BUFFER_INDEX\":0,\"OFFSET\":1}],\"VARIADIC_DATA_BUFFE"
    "RS\":[\"FF000102030405060708090A0B0C\"]},{\"name\":\"sv\",\"count\":3,\"VALIDITY\":[1,0,1],\"VIEWS\""
    ":[{\"SIZE\":12,\"INLINED\":\"twelve chars\"},{\"SIZE\":0,\"INLINED\":\"\"},{\"SIZE\":14,\"PREFIX_HEX"
    "\":\"6C6F6E67\",\"BUFFER_INDEX\":1,\"OFFSET\":0}],\"VARIADIC_DATA_BUFFERS\":[\"\",\"6C6F6E6765722074"
    "68616E203132\"]},{\"name\":\"fsb\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[\"000102\",\"000000\","
    "\"FFFFFF\"]},{\"name\":\"lst\",\"count\":3,\"VALIDITY\":[1,0,1],\"OFFSET\":[0,2,2,3],\"children\":[{"
    "\"name\":\"item\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[1,2,3]}]},{\"name\":\"llst\",\"count\":"
    "3,\"VALIDITY\":[1,0,1],\"OFFSET\":[\"0\",\"1\",\"1\",\"1\"],\"children\":[{\"name\":\"item\",\"count"
    "\":1,\"VALIDITY\":[1],\"DATA\":[9]}]},{\"name\":\"lv\",\"count\":3,\"VALIDITY\":[1,0,1],\"OFFSET\":["
    "2,0,0],\"SIZE\":[2,0,3],\"children\":[{\"name\":\"item\",\"count\":4,\"VALIDITY\":[1,1,1,1],\"DATA\""
    ":[4,5,6,7]}]},{\"name\":\"llv\",\"count\":3,\"VALIDITY\":[1,0,1],\"OFFSET\":[\"0\",\"0\",\"1\"],\"SI"
    "ZE\":[\"1\",\"0\",\"1\"],\"children\":[{\"name\":\"item\",\"count\":2,\"VALIDITY\":[1,1],\"DATA\":[8"
    ",9]}]},{\"name\":\"fsl\",\"count\":3,\"VALIDITY\":[1,0,1],\"children\":[{\"name\":\"item\",\"count\""
    ":6,\"VALIDITY\":[1,1,0,0,1,0],\"DATA\":[1,2,3,4,5,6]}]},{\"name\":\"st\",\"count\":3,\"VALIDITY\":[1"
    ",0,1],\"children\":[{\"name\":\"a\",\"count\":3,\"VALIDITY\":[1,1,0],\"DATA\":[1,2,3]},{\"name\":\"\""
    ",\"count\":3,\"VALIDITY\":[1,0,1],\"OFFSET\":[0,1,1,2],\"DATA\":[\"p\",\"\",\"r\"]}]},{\"name\":\"mp"
    "\",\"count\":3,\"VALIDITY\":[1,0,1],\"OFFSET\":[0,2,2,3],\"children\":[{\"name\":\"entries\",\"count"
    "\":3,\"VALIDITY\":[1,1,1],\"children\":[{\"name\":\"key\",\"count\":3,\"VALIDITY\":[1,1,1],\"OFFSET\""
    ":[0,1,2,3],\"DATA\":[\"k\",\"l\",\"m\"]},{\"name\":\"value\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA"
    "\":[1,2,3]}]}]},{\"name\":\"su\",\"count\":3,\"TYPE_ID\":[5,7,5],\"children\":[{\"name\":\"x\",\"cou"
    "nt\":3,\"VALIDITY\":[1,0,0],\"DATA\":[1,0,3]},{\"name\":\"y\",\"count\":3,\"VALIDITY\":[0,1,0],\"OFF"
    "SET\":[0,0,1,1],\"DATA\":[\"\",\"q\",\"\"]}]},{\"name\":\"du\",\"count\":3,\"TYPE_ID\":[42,43,42],\""
    "OFFSET\":[0,0,1],\"children\":[{\"name\":\"x\",\"count\":2,\"VALIDITY\":[1,0],\"DATA\":[10,11]},{\"n"
    "ame\":\"y\",\"count\":1,\"VALIDITY\":[1],\"OFFSET\":[0,1],\"DATA\":[\"w\"]}]},{\"name\":\"ree\",\"co"
    "unt\":3,\"children\":[{\"name\":\"run_ends\",\"count\":2,\"VALIDITY\":[1,1],\"DATA\":[2,3]},{\"name\""
    ":\"values\",\"count\":2,\"VALIDITY\":[1,0],\"OFFSET\":[0,2,2],\"DATA\":[\"aa\",\"\"]}]},{\"name\":\""
    "dict\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[0,0,1]},{\"name\":\"dict2\",\"count\":3,\"VALIDITY"
    "\":[1,0,1],\"DATA\":[1,5,0]},{\"name\":\"ndict\",\"count\":3,\"VALIDITY\":[1,0,1],\"DATA\":[0,1,0]}]"
    "},{\"count\":0,\"columns\":[{\"name\":\"n\",\"count\":0},{\"name\":\"b\",\"count\":0,\"VALIDITY\":[]"
    ",\"DATA\":[]},{\"name\":\"i8\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"u16\",\"count\":"
    "0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"i32\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":"
    "\"i64\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"u64\",\"count\":0,\"VALIDITY\":[],\"DAT"
    "A\":[]},{\"name\":\"f16\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"f32\",\"count\":0,\"V"
    "ALIDITY\":[],\"DATA\":[]},{\"name\":\"f64\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"d32"
    "\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"d64\",\"count\":0,\"VALIDITY\":[],\"DATA\":["
    "]},{\"name\":\"d128\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"d256\",\"count\":0,\"VALI"
    "DITY\":[],\"DATA\":[]},{\"name\":\"dt32\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"dt64\""
    ",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"t32\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]}"
    ",{\"name\":\"t64\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"ts\",\"count\":0,\"VALIDITY\""
    ":[],\"DATA\":[]},{\"name\":\"ts0\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"dur\",\"coun"
    "t\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"iym\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"nam"
    "e\":\"idt\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"imdn\",\"count\":0,\"VALIDITY\":[],"
    "\"DATA\":[]},{\"name\":\"bin\",\"count\":0,\"VALIDITY\":[],\"OFFSET\":[0],\"DATA\":[]},{\"name\":\"s"
    "tr\",\"count\":0,\"VALIDITY\":[],\"OFFSET\":[0],\"DATA\":[]},{\"name\":\"lbin\",\"count\":0,\"VALIDI"
    "TY\":[],\"OFFSET\":[\"0\"],\"DATA\":[]},{\"name\":\"lstr\",\"count\":0,\"VALIDITY\":[],\"OFFSET\":[\""
    "0\"],\"DATA\":[]},{\"name\":\"bv\",\"count\":0,\"VALIDITY\":[],\"VIEWS\":[],\"VARIADIC_DATA_BUFFERS\""
    ":[]},{\"name\":\"sv\",\"count\":0,\"VALIDITY\":[],\"VIEWS\":[],\"VARIADIC_DATA_BUFFERS\":[]},{\"name"
    "\":\"fsb\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"lst\",\"count\":0,\"VALIDITY\":[],\""
    "OFFSET\":[0],\"children\":[{\"name\":\"item\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]}]},{\"name\":\""
    "llst\",\"count\":0,\"VALIDITY\":[],\"OFFSET\":[\"0\"],\"children\":[{\"name\":\"item\",\"count\":0,\""
    "VALIDITY\":[],\"DATA\":[]}]},{\"name\":\"lv\",\"count\":0,\"VALIDITY\":[],\"OFFSET\":[],\"SIZE\":[],"
    "\"children\":[{\"name\":\"item\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]}]},{\"name\":\"llv\",\"coun"
    "t\":0,\"VALIDITY\":[],\"OFFSET\":[],\"SIZE\":[],\"children\":[{\"name\":\"item\",\"count\":0,\"VALID"
    "ITY\":[],\"DATA\":[]}]},{\"name\":\"fsl\",\"count\":0,\"VALIDITY\":[],\"children\":[{\"name\":\"item"
    "\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]}]},{\"name\":\"st\",\"count\":0,\"VALIDITY\":[],\"childre"
    "n\":[{\"name\":\"a\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"\",\"count\":0,\"VALIDITY\""
    ":[],\"OFFSET\":[0],\"DATA\":[]}]},{\"name\":\"mp\",\"count\":0,\"VALIDITY\":[],\"OFFSET\":[0],\"chil"
    "dren\":[{\"name\":\"entries\",\"count\":0,\"VALIDITY\":[],\"children\":[{\"name\":\"key\",\"count\":"
    "0,\"VALIDITY\":[],\"OFFSET\":[0],\"DATA\":[]},{\"name\":\"value\",\"count\":0,\"VALIDITY\":[],\"DATA"
    "\":[]}]}]},{\"name\":\"su\",\"count\":0,\"TYPE_ID\":[],\"children\":[{\"name\":\"x\",\"count\":0,\"V"
    "ALIDITY\":[],\"DATA\":[]},{\"name\":\"y\",\"count\":0,\"VALIDITY\":[],\"OFFSET\":[0],\"DATA\":[]}]},"
    "{\"name\":\"du\",\"count\":0,\"TYPE_ID\":[],\"OFFSET\":[],\"children\":[{\"name\":\"x\",\"count\":0,"
    "\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"y\",\"count\":0,\"VALIDITY\":[],\"OFFSET\":[0],\"DATA\":[]}"
    "]},{\"name\":\"ree\",\"count\":0,\"children\":[{\"name\":\"run_ends\",\"count\":0,\"VALIDITY\":[],\""
    "DATA\":[]},{\"name\":\"values\",\"count\":0,\"VALIDITY\":[],\"OFFSET\":[0],\"DATA\":[]}]},{\"name\":"
    "\"dict\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]},{\"name\":\"dict2\",\"count\":0,\"VALIDITY\":[],\""
    "DATA\":[]},{\"name\":\"ndict\",\"count\":0,\"VALIDITY\":[],\"DATA\":[]}]}]}";

/* ALL_TYPES holds the extremes of every decimal's bit width whatever its
 * precision (-11697 in decimal128(3, 2), 2^255 - 1 in decimal256(76, 0)), so
 * it is read with the quirk accept_decimal_overflow; test_decimal_precision
 * proves the default refuses it. */
static QvJsonFile *read_ok(const char *text) {
  QvJsonFile *f = NULL;
  QvError e;
  QvJsonReadOptions o = {.struct_size = sizeof o, .accept_decimal_overflow = true};
  QvStatus st = qv_test_json_read_text(&f, text, strlen(text), &o, &e);
  if (st != QV_OK) fail_msg("qv_json_read: %s", e.message);
  return f;
}

/* Reads `text`, expects QV_EINVAL (or `want`) and a message containing
 * `needle`. */
static void read_fails(const char *text, QvStatus want, const char *needle) {
  QvJsonFile *f = NULL;
  QvError e;
  QvStatus st = qv_test_json_read_text(&f, text, strlen(text), NULL, &e);
  if (st != want) fail_msg("expected status %d, got %d (%s) for: %.200s", want, st, e.message, text);
  assert_null(f);
  if (strstr(e.message, needle) == NULL)
    fail_msg("message \"%s\" does not contain \"%s\"", e.message, needle);
}

static char *write_ok(const QvJsonData *d) {
  char *text = NULL;
  size_t len = 0;
  QvError e;
  QvStatus st = qv_test_json_write_text(d, NULL, &text, &len, &e);
  if (st != QV_OK) fail_msg("qv_json_write: %s", e.message);
  assert_int_equal(strlen(text), len);
  return text;
}

static QvStatus compare(const QvJsonFile *a, const QvJsonFile *b, QvError *e) {
  QvJsonData da, db;
  qv_json_file_data(a, &da);
  qv_json_file_data(b, &db);
  return qv_json_compare(&da, &db, NULL, e);
}

/* Replaces the first occurrence of `from` (which must exist) by `to`. */
static char *replace(const char *text, const char *from, const char *to) {
  const char *p = strstr(text, from);
  if (p == NULL) fail_msg("\"%s\" not found", from);
  size_t n = strlen(text), fl = strlen(from), tl = strlen(to);
  char *out = malloc(n - fl + tl + 1);
  memcpy(out, text, (size_t)(p - text));
  memcpy(out + (p - text), to, tl);
  memcpy(out + (p - text) + tl, p + fl, n - (size_t)(p - text) - fl + 1);
  return out;
}

static int64_t field_index(const QvJsonData *d, const char *name) {
  for (int64_t i = 0; i < d->schema->n_children; i++)
    if (strcmp(d->schema->children[i]->name, name) == 0) return i;
  fail_msg("no field %s", name);
  return -1;
}

static void test_read_all_types(void **state) {
  (void)state;
  QvJsonFile *f = read_ok(k_all_types);
  QvJsonData d;
  qv_json_file_data(f, &d);
  assert_int_equal(d.n_batches, 2);
  assert_int_equal(d.batches[0]->length, 3);
  assert_int_equal(d.batches[1]->length, 0);
  /* pre-order: dict, dict2, ndict, ndict's item */
  assert_int_equal(d.n_dictionary_ids, 4);
  assert_int_equal(d.dictionary_ids[0], 0);
  assert_int_equal(d.dictionary_ids[1], 0);
  assert_int_equal(d.dictionary_ids[2], 1);
  assert_int_equal(d.dictionary_ids[3], 0);
  assert_int_equal(qv_json_file_n_dictionaries(f), 2);
  const char *v;
  int32_t vl;
  assert_true(qv_arrow_metadata_get(d.schema->metadata, "schema_key", &v, &vl));
  assert_int_equal(vl, 12);
  int64_t fsb = field_index(&d, "fsb");
  assert_true(qv_arrow_metadata_get(d.schema->children[fsb]->metadata, "ARROW:extension:name", &v, &vl));
  assert_string_equal(d.schema->children[fsb]->format, "w:3");
  assert_string_equal(d.schema->children[field_index(&d, "d128")]->format, "d:3,2");
  assert_string_equal(d.schema->children[field_index(&d, "ts")]->format, "tsu:Europe/Paris");
  assert_string_equal(d.schema->children[field_index(&d, "su")]->format, "+us:5,7");
  assert_true(d.schema->children[field_index(&d, "dict2")]->flags & ARROW_FLAG_DICTIONARY_ORDERED);

  QvArrayView view;
  QvError e;
  assert_int_equal(qv_array_view_init(&view, d.schema, &e), QV_OK);
  /* in full but for the decimals' precision (k_all_types holds bit-width extremes) */
  assert_int_equal(qv_array_view_set_array(&view, d.batches[0], QV_VALIDATE_NONE, &e), QV_OK);
  assert_int_equal(qv_array_view_validate(&view, QV_VALIDATE_FULL, QV_VALIDATE_DECIMALS_UNBOUNDED, &e),
                   QV_OK);
  assert_int_equal(qv_array_view_validate(&view, QV_VALIDATE_FULL, 0, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "does not fit in precision"));
  assert_int_equal(qv_array_view_get_int(&view.children[field_index(&d, "i64")], 0), INT64_MIN);
  assert_true(qv_array_view_get_uint(&view.children[field_index(&d, "u64")], 2) == UINT64_MAX);
  assert_true(qv_array_view_is_null(&view.children[field_index(&d, "i8")], 1));
  QvBytes b = qv_array_view_get_bytes(&view.children[field_index(&d, "imdn")], 0);
  int64_t ns;
  memcpy(&ns, b.data + 8, 8);
  assert_int_equal(ns, INT64_MAX);
  b = qv_array_view_get_bytes(&view.children[field_index(&d, "d128")], 0);
  int64_t lo; /* the low half of the host-order 16-byte integer */
  memcpy(&lo, b.data + (QV_HOST_BIG_ENDIAN ? 8 : 0), 8);
  assert_int_equal(lo, -11697); /* precision 3, never range checked */
  assert_int_equal(qv_array_view_get_int(&view.children[field_index(&d, "dt64")], 2), -86400001);
  assert_int_equal(qv_array_view_get_int(&view.children[field_index(&d, "t32")], 2), 90000);
  assert_true(qv_array_view_get_double(&view.children[field_index(&d, "f16")], 2) == -65504.0);
  char *text;
  assert_int_equal(qv_array_view_format_value(&view.children[field_index(&d, "ndict")], 2, 0, &text, &e), QV_OK);
  assert_string_equal(text, "[\"a\", \"c\"]");
  free(text);
  assert_int_equal(qv_array_view_format_value(&view.children[field_index(&d, "sv")], 2, 0, &text, &e), QV_OK);
  assert_string_equal(text, "\"longer than 12\"");
  free(text);
  assert_int_equal(qv_array_view_format_value(&view.children[field_index(&d, "str")], 2, 0, &text, &e), QV_OK);
  assert_int_equal(qv_array_view_get_bytes(&view.children[field_index(&d, "str")], 2).size, 8);
  free(text);
  qv_array_view_reset(&view);
  qv_json_file_free(f);
}

static void test_round_trip(void **state) {
  (void)state;
  QvJsonFile *f = read_ok(k_all_types);
  QvJsonData d;
  qv_json_file_data(f, &d);
  char *text = write_ok(&d);
  QvJsonFile *g = read_ok(text);
  QvError e;
  if (compare(f, g, &e) != QV_OK) fail_msg("round trip differs: %s", e.message);
  QvJsonData dg;
  qv_json_file_data(g, &dg);
  /* the shared and nested dictionary ids survive */
  assert_int_equal(dg.n_dictionary_ids, 4);
  assert_int_equal(dg.dictionary_ids[1], dg.dictionary_ids[0]);
  assert_int_equal(dg.dictionary_ids[3], dg.dictionary_ids[0]);
  assert_true(dg.dictionary_ids[2] != dg.dictionary_ids[0]);
  /* writing what was read gives the same text */
  char *again = write_ok(&dg);
  assert_string_equal(text, again);
  /* and on one line */
  QvJsonWriteOptions wo = {sizeof wo, -1, 0};
  char *line;
  assert_int_equal(qv_test_json_write_text(&dg, &wo, &line, NULL, &e), QV_OK);
  assert_null(strchr(line, '\n') == line + strlen(line) - 1 ? NULL : strchr(line, '\n'));
  QvJsonFile *h = read_ok(line);
  assert_int_equal(compare(f, h, &e), QV_OK);
  free(line);
  free(again);
  free(text);
  qv_json_file_free(h);
  qv_json_file_free(g);
  qv_json_file_free(f);
}

/* A batch sliced (offset 1, length 2) is written as its logical rows. */
static void test_slices(void **state) {
  (void)state;
  QvJsonFile *f = read_ok(k_all_types);
  QvJsonData d;
  qv_json_file_data(f, &d);
  struct ArrowArray slice;
  QvError e;
  assert_int_equal(qv_array_share(d.batches[0], &slice, &e), QV_OK);
  slice.offset = 1;
  slice.length = 2;
  const struct ArrowArray *batches[1] = {&slice};
  QvJsonData ds = d;
  ds.batches = batches;
  ds.n_batches = 1;
  char *text = write_ok(&ds);
  QvJsonFile *g = read_ok(text);
  QvJsonData dg;
  qv_json_file_data(g, &dg);
  assert_int_equal(dg.batches[0]->length, 2);
  assert_int_equal(dg.batches[0]->offset, 0);
  if (qv_json_compare(&ds, &dg, NULL, &e) != QV_OK) fail_msg("slice differs: %s", e.message);
  /* the comparison does see offsets: row 0 of the slice is row 1 */
  assert_int_equal(qv_json_compare(&d, &dg, NULL, &e), QV_EINVAL);
  free(text);
  slice.release(&slice);
  qv_json_file_free(g);
  qv_json_file_free(f);
}

static QvStatus read_path(QvJsonFile **out, const char *path, const QvJsonReadOptions *o,
                          QvError *e) {
  QvSource *src;
  QvStatus st = qv_source_new_path(&src, path, e);
  if (st) return st;
  st = qv_json_read(out, src, o, e);
  qv_source_free(src);
  return st;
}

static void test_gzip(void **state) {
  (void)state;
  char path[] = "/tmp/qv_ij_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  /* two gzip members, as `cat a.gz b.gz` makes: the text split in two */
  size_t n = strlen(k_all_types), half = n / 2;
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(6);
  assert_non_null(c);
  size_t cap = libdeflate_gzip_compress_bound(c, n) * 2;
  uint8_t *gz = malloc(cap);
  size_t m1 = libdeflate_gzip_compress(c, k_all_types, half, gz, cap);
  size_t m2 = libdeflate_gzip_compress(c, k_all_types + half, n - half, gz + m1, cap - m1);
  assert_true(m1 > 0 && m2 > 0);
  libdeflate_free_compressor(c);
  assert_int_equal(write(fd, gz, m1 + m2), (ssize_t)(m1 + m2));
  close(fd);
  QvJsonFile *g = NULL, *f = read_ok(k_all_types);
  QvError e;
  QvJsonReadOptions o = {.struct_size = sizeof o, .accept_decimal_overflow = true};
  assert_int_equal(read_path(&g, path, &o, &e), QV_OK);
  assert_int_equal(compare(f, g, &e), QV_OK);
  qv_json_file_free(g);
  /* the limit counts decompressed bytes */
  QvJsonReadOptions ro = {.struct_size = sizeof ro, .max_size = 1000};
  assert_int_equal(read_path(&g, path, &ro, &e), QV_ELIMIT);
  /* a corrupt member is refused, naming the file */
  gz[m1 + 12] ^= 0x55;
  fd = open(path, O_WRONLY | O_TRUNC);
  assert_int_equal(write(fd, gz, m1 + m2), (ssize_t)(m1 + m2));
  close(fd);
  assert_int_equal(read_path(&g, path, NULL, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, path));
  free(gz);
  /* a plain file reads too */
  FILE *out = fopen(path, "wb");
  fputs(k_all_types, out);
  fclose(out);
  assert_int_equal(read_path(&g, path, &o, &e), QV_OK);
  assert_int_equal(compare(f, g, &e), QV_OK);
  qv_json_file_free(g);
  unlink(path);
  assert_int_equal(read_path(&g, path, NULL, &e), QV_EIO);
  qv_json_file_free(f);
}

/* NaN, infinities and -0.0 survive a round trip (JSON has no NaN). */
static void test_float_specials(void **state) {
  (void)state;
  struct ArrowSchema s;
  struct ArrowArray a;
  QvError e;
  assert_int_equal(qv_arrow_schema_init(&s, "+s", "", 0, 2, &e), QV_OK);
  assert_int_equal(qv_arrow_schema_init(s.children[0], "g", "d", ARROW_FLAG_NULLABLE, 0, &e), QV_OK);
  assert_int_equal(qv_arrow_schema_init(s.children[1], "f", "f", ARROW_FLAG_NULLABLE, 0, &e), QV_OK);
  assert_int_equal(qv_array_init_from_schema(&a, &s, &e), QV_OK);
  const double vals[] = {NAN, INFINITY, -INFINITY, -0.0, 0.1, 1e-310, 3.4028234663852886e38};
  for (int i = 0; i < 7; i++) {
    assert_int_equal(qv_array_append_double(a.children[0], vals[i], NULL), QV_OK);
    assert_int_equal(qv_array_append_double(a.children[1], i == 5 ? 1e-40 : vals[i], NULL), QV_OK);
    assert_int_equal(qv_array_finish_element(&a, NULL), QV_OK);
  }
  assert_int_equal(qv_array_finish_building(&a, QV_VALIDATE_FULL, &e), QV_OK);
  const struct ArrowArray *batches[1] = {&a};
  QvJsonData d = {&s, batches, 1, NULL, 0};
  char *text = write_ok(&d);
  QvJsonFile *g = read_ok(text);
  QvJsonData dg;
  qv_json_file_data(g, &dg);
  QvJsonCompareOptions exact = {sizeof exact, -1};
  if (qv_json_compare(&d, &dg, &exact, &e) != QV_OK) fail_msg("%s", e.message);
  QvArrayView v;
  assert_int_equal(qv_array_view_init(&v, dg.schema, &e), QV_OK);
  assert_int_equal(qv_array_view_set_array(&v, dg.batches[0], QV_VALIDATE_FULL, &e), QV_OK);
  assert_true(signbit(qv_array_view_get_double(&v.children[0], 3)));
  assert_true(isnan(qv_array_view_get_double(&v.children[1], 0)));
  assert_true(qv_array_view_get_double(&v.children[0], 5) == 1e-310);
  qv_array_view_reset(&v);
  free(text);
  qv_json_file_free(g);
  a.release(&a);
  s.release(&s);
}

/* Floats compare with Arrow C++'s absolute tolerance 1e-5. */
static void test_float_tolerance(void **state) {
  (void)state;
  const char *base = "{\"schema\":{\"fields\":[{\"name\":\"f\",\"nullable\":true,\"type\":"
                     "{\"name\":\"floatingpoint\",\"precision\":\"DOUBLE\"},\"children\":[]}]},"
                     "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"f\",\"count\":1,"
                     "\"VALIDITY\":[1],\"DATA\":[1.5]}]}]}";
  QvJsonFile *a = read_ok(base);
  char *near = replace(base, "1.5]", "1.500001]");
  char *far = replace(base, "1.5]", "1.5001]");
  QvJsonFile *b = read_ok(near), *c = read_ok(far);
  QvError e;
  assert_int_equal(compare(a, b, &e), QV_OK);
  assert_int_equal(compare(a, c, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "expected 1.5, found 1.5001"));
  free(near);
  free(far);
  qv_json_file_free(a);
  qv_json_file_free(b);
  qv_json_file_free(c);
}

/* The comparison names the first difference: one test per kind. */
static void expect_difference(const char *from, const char *to, const char *needle) {
  char *changed = replace(k_all_types, from, to);
  QvJsonFile *a = read_ok(k_all_types), *b = read_ok(changed);
  QvError e;
  assert_int_equal(compare(a, b, &e), QV_EINVAL);
  if (strstr(e.message, needle) == NULL)
    fail_msg("message \"%s\" does not contain \"%s\"", e.message, needle);
  /* and it is a real difference, not an error of the comparison itself */
  assert_int_equal(compare(a, a, &e), QV_OK);
  assert_int_equal(compare(b, b, &e), QV_OK);
  free(changed);
  qv_json_file_free(a);
  qv_json_file_free(b);
}

static void test_compare_value(void **state) {
  (void)state;
  expect_difference("[-2147483648,5,2147483647]", "[-2147483648,5,2147483646]",
                    "batch 0, row 2, field 4 \"i32\": expected 2147483647, found 2147483646");
  /* nested: the path inside the row */
  expect_difference("\"DATA\":[4,5,6,7]", "\"DATA\":[4,5,6,8]",
                    "batch 0, row 0, field 33 \"lv\".\"item\"[3]: expected 7, found 8");
}

static void test_compare_validity(void **state) {
  (void)state;
  expect_difference("\"name\":\"u16\",\"count\":3,\"VALIDITY\":[1,0,1]",
                    "\"name\":\"u16\",\"count\":3,\"VALIDITY\":[1,1,1]",
                    "batch 0, row 1, field 3 \"u16\": expected null, found 7");
}

static void test_compare_field_name(void **state) {
  (void)state;
  expect_difference("{\"name\":\"a\",\"nullable\":true", "{\"name\":\"A\",\"nullable\":true",
                    "field 36 \"st\".children[0] \"a\": name: expected \"a\", found \"A\"");
}

static void test_compare_metadata(void **state) {
  (void)state;
  expect_difference("\"value\":\"schema value\"", "\"value\":\"schema valuE\"",
                    "schema: metadata: expected \"schema_key\" = \"schema value\", found "
                    "\"schema_key\" = \"schema valuE\"");
  expect_difference("\"value\":\"dup\"", "\"value\":\"dUp\"",
                    "field 4 \"i32\": metadata: expected \"k1\" = \"dup\", found \"k1\" = \"dUp\"");
  /* an entry missing on one side, and one only the other side has */
  expect_difference("{\"key\":\"k1\",\"value\":\"v1\"},", "",
                    "field 4 \"i32\": metadata: expected \"k1\" = \"v1\", found \"k1\" = \"dup\"");
  expect_difference("\"key\":\"k1\",\"value\":\"v1\"", "\"key\":\"k0\",\"value\":\"v1\"",
                    "field 4 \"i32\": metadata: expected no entry \"k0\", found \"k0\" = \"v1\"");
}

/* Every occurrence of `from` replaced. */
static char *replace_all(const char *text, const char *from, const char *to) {
  char *out = replace(text, from, to);
  for (char *next; strstr(out, from) != NULL; out = next) {
    next = replace(out, from, to);
    free(out);
  }
  return out;
}

/* A map's entries, key and value names are not compared (the format does
 * not enforce them; Arrow C++ compares map types without them), other
 * children's names are (test_compare_field_name); the map's types and
 * nullability still are. */
static void test_compare_map_names(void **state) {
  (void)state;
  char *a1 = replace_all(k_all_types, "\"name\":\"entries\"", "\"name\":\"some_entries\"");
  char *a2 = replace_all(a1, "\"name\":\"key\"", "\"name\":\"some_key\"");
  char *other = replace_all(a2, "\"name\":\"value\"", "\"name\":\"some_value\"");
  QvJsonFile *a = read_ok(k_all_types), *b = read_ok(other);
  QvError e;
  assert_int_equal(compare(a, b, &e), QV_OK);
  assert_int_equal(compare(b, a, &e), QV_OK);
  free(a1);
  free(a2);
  free(other);
  qv_json_file_free(a);
  qv_json_file_free(b);
  expect_difference("{\"name\":\"value\",\"nullable\":true,\"type\":{\"name\":\"int\"",
                    "{\"name\":\"value\",\"nullable\":false,\"type\":{\"name\":\"int\"",
                    "\"mp\".children[0] \"entries\".children[1] \"value\": expected nullable, found "
                    "non-nullable");
}

/* Custom metadata is a map (Arrow C++'s KeyValueMetadata::Equals): the same
 * entries in another order are equal, duplicates count. */
static void test_compare_metadata_order(void **state) {
  (void)state;
  char *swapped = replace(k_all_types, "{\"key\":\"k1\",\"value\":\"v1\"},{\"key\":\"k1\",\"value\":\"dup\"}",
                          "{\"key\":\"k1\",\"value\":\"dup\"},{\"key\":\"k1\",\"value\":\"v1\"}");
  assert_true(strcmp(swapped, k_all_types) != 0);
  char *twice = replace(k_all_types, "{\"key\":\"k1\",\"value\":\"v1\"},{\"key\":\"k1\",\"value\":\"dup\"}",
                        "{\"key\":\"k1\",\"value\":\"dup\"},{\"key\":\"k1\",\"value\":\"dup\"}");
  QvJsonFile *a = read_ok(k_all_types), *b = read_ok(swapped), *c = read_ok(twice);
  QvError e;
  assert_int_equal(compare(a, b, &e), QV_OK);
  assert_int_equal(compare(b, a, &e), QV_OK);
  assert_int_equal(compare(a, c, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "metadata: expected 1 entries \"k1\" = \"dup\", found 2"));
  free(swapped);
  free(twice);
  qv_json_file_free(a);
  qv_json_file_free(b);
  qv_json_file_free(c);
}

static void test_compare_dictionary(void **state) {
  (void)state;
  expect_difference("[\"a\",\"b\",\"\",\"c\",\"d\",\"e\"]", "[\"a\",\"b\",\"\",\"c\",\"d\",\"f\"]",
                    "batch 0: field 41 \"dict\": dictionary[5]: expected \"e\", found \"f\"");
  /* the sharing itself: the same arrays, but dict2 said to use its own id */
  QvJsonFile *a = read_ok(k_all_types);
  QvJsonData d, other;
  qv_json_file_data(a, &d);
  other = d;
  int64_t ids[4] = {0, 5, 1, 0};
  other.dictionary_ids = ids;
  QvError e;
  assert_int_equal(qv_json_compare(&d, &other, NULL, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "field 41 \"dict\" and field 42 \"dict2\": expected one shared "
                                    "dictionary, found separate"));
  int64_t merged[4] = {0, 0, 0, 0};
  other.dictionary_ids = merged;
  assert_int_equal(qv_json_compare(&d, &other, NULL, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "field 41 \"dict\" and field 43 \"ndict\": expected separate "
                                    "dictionary, found one shared"));
  /* inside a dictionary's values (ndict's items share id 0 with dict) only
   * the values count: Arrow C++ writes those with ids of their own */
  int64_t own[4] = {0, 0, 1, 7};
  other.dictionary_ids = own;
  assert_int_equal(qv_json_compare(&d, &other, NULL, &e), QV_OK);
  assert_int_equal(qv_json_compare(&other, &d, NULL, &e), QV_OK);
  qv_json_file_free(a);
}

static void test_compare_shape(void **state) {
  (void)state;
  QvJsonFile *a = read_ok(k_all_types);
  QvJsonData d;
  qv_json_file_data(a, &d);
  QvJsonData fewer = d;
  fewer.n_batches = 1;
  QvError e;
  assert_int_equal(qv_json_compare(&d, &fewer, NULL, &e), QV_EINVAL);
  assert_non_null(strstr(e.message, "expected 2 batches, found 1"));
  expect_difference("\"name\":\"i8\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":8",
                    "\"name\":\"i8\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":16",
                    "field 2 \"i8\": type: expected int8 (\"c\"), found int16 (\"s\")");
  qv_json_file_free(a);
}

#define FIELD_I32 "{\"name\":\"x\",\"nullable\":true,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]}"
#define SCHEMA1(f) "{\"schema\":{\"fields\":[" f "]},"

/* A decimal must fit its precision, as Arrow C++'s ValidateFull says
 * (decimal128(5, 2) cannot hold 1234567.89); the quirk
 * accept_decimal_overflow reads it. Every bit width, both signs, the bound
 * itself (10^p - 1 fits, 10^p does not). */
#define DEC1(p, bits, v)                                                                         \
  SCHEMA1("{\"name\":\"d\",\"nullable\":true,\"type\":{\"name\":\"decimal\",\"precision\":" #p  \
          ",\"scale\":2,\"bitWidth\":" #bits "},\"children\":[]}")                                  \
  "\"batches\":[{\"count\":2,\"columns\":[{\"name\":\"d\",\"count\":2,\"VALIDITY\":[1,0],"          \
  "\"DATA\":[\"" v "\",\"99999\"]}]}]}"

/* Reads `text` with the default options (no quirk), which must succeed. */
static void strict_ok(const char *text) {
  QvJsonFile *f = NULL;
  QvError e;
  if (qv_test_json_read_text(&f, text, strlen(text), NULL, &e) != QV_OK)
    fail_msg("qv_json_read: %s", e.message);
  qv_json_file_free(f);
}

static void test_decimal_precision(void **state) {
  (void)state;
  strict_ok((DEC1(5, 128, "99999")));
  strict_ok((DEC1(5, 128, "-99999")));
  read_fails(DEC1(5, 128, "123456789"), QV_EINVAL, "value 1234567.89 at 0 does not fit in precision 5");
  read_fails(DEC1(5, 128, "100000"), QV_EINVAL, "value 1000.00 at 0 does not fit in precision 5");
  read_fails(DEC1(5, 128, "-100000"), QV_EINVAL, "value -1000.00 at 0 does not fit in precision 5");
  read_fails(DEC1(9, 32, "1000000000"), QV_EINVAL, "does not fit in precision 9");
  strict_ok((DEC1(9, 32, "-999999999")));
  read_fails(DEC1(18, 64, "-1000000000000000000"), QV_EINVAL, "does not fit in precision 18");
  strict_ok((DEC1(18, 64, "999999999999999999")));
  read_fails(DEC1(38, 128, "100000000000000000000000000000000000000"), QV_EINVAL,
             "does not fit in precision 38");
  strict_ok((DEC1(38, 128, "-99999999999999999999999999999999999999")));
  read_fails(DEC1(76, 256, "1" "0000000000000000000000000000000000000000000000000000000000000000000000000000"),
             QV_EINVAL, "does not fit in precision 76");
  strict_ok((DEC1(76, 256, "-" "9999999999999999999999999999999999999999999999999999999999999999999999999999")));
  /* the null slot's value (99999) is not checked */
  strict_ok((DEC1(3, 128, "999")));
  /* the default refuses k_all_types' extremes, the quirk reads them */
  read_fails(k_all_types, QV_EINVAL, "does not fit in precision");
  qv_json_file_free(read_ok(k_all_types));
  read_fails(DEC1(5, 128, "123456789"), QV_EINVAL, "1234567.89");
  QvJsonFile *f = read_ok(DEC1(5, 128, "123456789"));
  qv_json_file_free(f);
}

static void test_bad_input(void **state) {
  (void)state;
  read_fails("{\"schema\": ", QV_EINVAL, "malformed JSON at line 1");
  read_fails("[1]", QV_EINVAL, "expected an object");
  read_fails("{\"batches\":[]}", QV_EINVAL, "\"schema\" is missing");
  /* a type missing its parameters */
  read_fails(SCHEMA1("{\"name\":\"x\",\"nullable\":true,\"type\":{\"name\":\"int\"},\"children\":[]}")
             "\"batches\":[]}", QV_EINVAL, "schema.fields[0].type: \"bitWidth\" is missing");
  read_fails(SCHEMA1("{\"name\":\"x\",\"nullable\":true,\"type\":{\"name\":\"decimal\",\"scale\":2},\"children\":[]}")
             "\"batches\":[]}", QV_EINVAL, "schema.fields[0].type: \"precision\" is missing");
  read_fails(SCHEMA1("{\"name\":\"x\",\"nullable\":true,\"type\":{\"name\":\"list\"},\"children\":[]}")
             "\"batches\":[]}", QV_EINVAL, "schema.fields[0]: type \"list\" needs 1 children");
  read_fails(SCHEMA1("{\"name\":\"x\",\"nullable\":true,\"type\":{\"name\":\"time\",\"unit\":\"SECOND\",\"bitWidth\":64},\"children\":[]}")
             "\"batches\":[]}", QV_EINVAL, "does not match the unit");
  read_fails(SCHEMA1("{\"name\":\"x\",\"nullable\":true,\"type\":{\"name\":\"wat\"},\"children\":[]}")
             "\"batches\":[]}", QV_EINVAL, "schema.fields[0].type: unknown type \"wat\"");
  /* counts */
  read_fails(SCHEMA1(FIELD_I32) "\"batches\":[{\"count\":2,\"columns\":[{\"name\":\"x\",\"count\":3,"
             "\"VALIDITY\":[1,1,1],\"DATA\":[1,2,3]}]}]}", QV_EINVAL,
             "batches[0].columns[0]: count is 3, expected 2");
  read_fails(SCHEMA1(FIELD_I32) "\"batches\":[{\"count\":4,\"columns\":[{\"name\":\"x\",\"count\":4,"
             "\"VALIDITY\":[1,1,1,1],\"DATA\":[1,2,3]}]}]}", QV_EINVAL,
             "batches[0].columns[0].DATA: 3 values, count is 4");
  read_fails(SCHEMA1(FIELD_I32) "\"batches\":[{\"count\":1,\"columns\":[]}]}", QV_EINVAL,
             "batches[0]: 0 columns, the schema has 1 fields");
  /* buffers of the wrong length or content */
  read_fails(SCHEMA1(FIELD_I32) "\"batches\":[{\"count\":2,\"columns\":[{\"name\":\"x\",\"count\":2,"
             "\"VALIDITY\":[1],\"DATA\":[1,2]}]}]}", QV_EINVAL,
             "batches[0].columns[0].VALIDITY: 1 values, count is 2");
  read_fails(SCHEMA1(FIELD_I32) "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"x\",\"count\":1,"
             "\"VALIDITY\":[1],\"DATA\":[4294967296]}]}]}", QV_EINVAL,
             "batches[0].columns[0].DATA[0]: 4294967296 does not fit int32");
  /* the index of a bad value (and a member below it) in the path */
  read_fails(SCHEMA1(FIELD_I32) "\"batches\":[{\"count\":3,\"columns\":[{\"name\":\"x\",\"count\":3,"
             "\"VALIDITY\":[1,0,2],\"DATA\":[1,2,3]}]}]}", QV_EINVAL,
             "batches[0].columns[0].VALIDITY[2]: expected 0 or 1, found an integer");
  read_fails(SCHEMA1(FIELD_I32) "\"batches\":[{\"count\":3,\"columns\":[{\"name\":\"x\",\"count\":3,"
             "\"VALIDITY\":[1,0,1],\"DATA\":[1,2,-2147483649]}]}]}", QV_EINVAL,
             "batches[0].columns[0].DATA[2]: -2147483649 does not fit int32");
  read_fails(SCHEMA1("{\"name\":\"s\",\"nullable\":true,\"type\":{\"name\":\"utf8view\"},\"children\":[]}")
             "\"batches\":[{\"count\":2,\"columns\":[{\"name\":\"s\",\"count\":2,\"VALIDITY\":[1,1],"
             "\"VIEWS\":[{\"SIZE\":1,\"INLINED\":\"a\"},{\"SIZE\":-1,\"INLINED\":\"\"}],"
             "\"VARIADIC_DATA_BUFFERS\":[]}]}]}", QV_EINVAL,
             "batches[0].columns[0].VIEWS[1].SIZE: -1 does not fit 32 bits");
  read_fails(SCHEMA1("{\"name\":\"s\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[]}")
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"s\",\"count\":1,\"VALIDITY\":[1],"
             "\"OFFSET\":[0,5],\"DATA\":[\"abc\"]}]}]}", QV_EINVAL,
             "batches[0].columns[0].DATA[0]: 3 bytes, but OFFSET[0..1] spans 5");
  read_fails(SCHEMA1("{\"name\":\"l\",\"nullable\":true,\"type\":{\"name\":\"list\"},\"children\":[" FIELD_I32 "]}")
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"l\",\"count\":1,\"VALIDITY\":[1],"
             "\"OFFSET\":[0,3],\"children\":[{\"name\":\"x\",\"count\":2,\"VALIDITY\":[1,1],\"DATA\":[1,2]}]}]}]}",
             QV_EINVAL, "batches[0].columns[0].OFFSET[1]: 3 is outside 0..2");
  read_fails(SCHEMA1("{\"name\":\"l\",\"nullable\":true,\"type\":{\"name\":\"list\"},\"children\":[" FIELD_I32 "]}")
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"l\",\"count\":1,\"VALIDITY\":[1],"
             "\"OFFSET\":[0,1],\"children\":[{\"name\":\"x\",\"count\":1,\"VALIDITY\":[1],\"DATA\":[1,2]}]}]}]}",
             QV_EINVAL, "batches[0].columns[0].children[0].DATA: 2 values, count is 1");
  read_fails(SCHEMA1("{\"name\":\"b\",\"nullable\":true,\"type\":{\"name\":\"binary\"},\"children\":[]}")
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"b\",\"count\":1,\"VALIDITY\":[1],"
             "\"OFFSET\":[0,1],\"DATA\":[\"F\"]}]}]}", QV_EINVAL, "DATA[0]: \"F\" is not hex");
  read_fails(SCHEMA1("{\"name\":\"s\",\"nullable\":true,\"type\":{\"name\":\"utf8view\"},\"children\":[]}")
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"s\",\"count\":1,\"VALIDITY\":[1],"
             "\"VIEWS\":[{\"SIZE\":20,\"PREFIX_HEX\":\"41414141\",\"BUFFER_INDEX\":3,\"OFFSET\":0}],"
             "\"VARIADIC_DATA_BUFFERS\":[]}]}]}", QV_EINVAL, "batches[0]");
  read_fails(SCHEMA1("{\"name\":\"d\",\"nullable\":true,\"type\":{\"name\":\"decimal\",\"precision\":9,\"scale\":0,\"bitWidth\":32},\"children\":[]}")
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"d\",\"count\":1,\"VALIDITY\":[1],"
             "\"DATA\":[\"4294967296\"]}]}]}", QV_EINVAL, "is not an integer of 32 bits");
  read_fails(SCHEMA1("{\"name\":\"t\",\"nullable\":true,\"type\":{\"name\":\"timestamp\",\"unit\":\"SECOND\"},\"children\":[]}")
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"t\",\"count\":1,\"VALIDITY\":[1],"
             "\"DATA\":[\"18446744073709551616\"]}]}]}", QV_EINVAL,
             "DATA[0]: \"18446744073709551616\" is not a 64-bit integer");
  read_fails(SCHEMA1("{\"name\":\"u\",\"nullable\":false,\"type\":{\"name\":\"union\",\"mode\":\"SPARSE\",\"typeIds\":[3]},\"children\":[" FIELD_I32 "]}")
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"u\",\"count\":1,\"TYPE_ID\":[4],"
             "\"children\":[{\"name\":\"x\",\"count\":1,\"VALIDITY\":[1],\"DATA\":[1]}]}]}]}",
             QV_EINVAL, "batches[0].columns[0]: TYPE_ID[0] is not one of the union's typeIds");
  read_fails(SCHEMA1("{\"name\":\"r\",\"nullable\":false,\"type\":{\"name\":\"runendencoded\"},\"children\":["
             "{\"name\":\"run_ends\",\"nullable\":false,\"type\":{\"name\":\"int\",\"bitWidth\":32,\"isSigned\":true},\"children\":[]}," FIELD_I32 "]}")
             "\"batches\":[{\"count\":3,\"columns\":[{\"name\":\"r\",\"count\":3,\"children\":["
             "{\"name\":\"run_ends\",\"count\":2,\"VALIDITY\":[1,1],\"DATA\":[2,2]},"
             "{\"name\":\"x\",\"count\":2,\"VALIDITY\":[1,1],\"DATA\":[1,2]}]}]}]}",
             QV_EINVAL, "run end 1 (2) is not greater than 2");
  /* dictionaries */
  read_fails(SCHEMA1("{\"name\":\"d\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[],"
             "\"dictionary\":{\"id\":3,\"indexType\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":true},\"isOrdered\":false}}")
             "\"dictionaries\":[{\"id\":4,\"data\":{\"count\":0,\"columns\":[{\"name\":\"D\",\"count\":0,"
             "\"VALIDITY\":[],\"OFFSET\":[0],\"DATA\":[]}]}}],\"batches\":[]}",
             QV_EINVAL, "dictionaries[0]: no field uses dictionary id 4");
  read_fails(SCHEMA1("{\"name\":\"d\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[],"
             "\"dictionary\":{\"id\":3,\"indexType\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":true},\"isOrdered\":false}}")
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"d\",\"count\":1,\"VALIDITY\":[1],\"DATA\":[0]}]}]}",
             QV_EINVAL, "batches[0].columns[0]: dictionary id 3 has no entry in \"dictionaries\"");
  read_fails(SCHEMA1("{\"name\":\"d\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[],"
             "\"dictionary\":{\"id\":3,\"indexType\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":true},\"isOrdered\":false}}")
             "\"dictionaries\":[{\"id\":3,\"data\":{\"count\":1,\"columns\":[{\"name\":\"D\",\"count\":1,"
             "\"VALIDITY\":[1],\"OFFSET\":[0,1],\"DATA\":[\"z\"]}]}}],"
             "\"batches\":[{\"count\":1,\"columns\":[{\"name\":\"d\",\"count\":1,\"VALIDITY\":[1],\"DATA\":[1]}]}]}",
             QV_EINVAL, "batches[0]: child 0 (d): dictionary index 1 at 0 is outside the dictionary of 1 values");
  read_fails(SCHEMA1("{\"name\":\"d\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[],"
             "\"dictionary\":{\"id\":3,\"indexType\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":true},\"isOrdered\":false}},"
             "{\"name\":\"e\",\"nullable\":true,\"type\":{\"name\":\"binary\"},\"children\":[],"
             "\"dictionary\":{\"id\":3,\"indexType\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":true},\"isOrdered\":false}}")
             "\"batches\":[]}", QV_EINVAL,
             "schema.fields[1]: dictionary id 3 is also used by schema.fields[0] with another value type");
  read_fails("{\"schema\":{\"fields\":[]},\"batches\":[],\"schema\":{}}", QV_EINVAL, "malformed JSON");
}

/* arrow-js writes negative 64-bit integers and decimals as the unsigned
 * form of their bits; those read as the bits they spell. */
#define UNSIGNED_FORMS(t, dec)                                                                     \
  SCHEMA1("{\"name\":\"t\",\"nullable\":true,\"type\":{\"name\":\"duration\",\"unit\":\"SECOND\"},"   \
          "\"children\":[]},{\"name\":\"d\",\"nullable\":true,\"type\":{\"name\":\"decimal\","         \
          "\"precision\":5,\"scale\":2},\"children\":[]}")                                           \
  "\"batches\":[{\"count\":2,\"columns\":[{\"name\":\"t\",\"count\":2,\"VALIDITY\":[1,1],"             \
  "\"DATA\":[\"" t "\",-3]},{\"name\":\"d\",\"count\":2,\"VALIDITY\":[1,1],"                         \
  "\"DATA\":[\"" dec "\",\"-11697\"]}]}]}"

/* 2^63..2^64-1 in a signed 64-bit type (here a duration) and 2^127.. in a
 * decimal128 are out of range: refused by default (a file holding
 * -9223372036854775808 must not equal a JSON saying 9223372036854775808);
 * QvJsonReadOptions.accept_unsigned_spelling reads them as the bits
 * arrow-js means (-1 as 2^64 - 1, -11697 as 2^128 - 11697). */
static void test_unsigned_forms(void **state) {
  (void)state;
  read_fails(UNSIGNED_FORMS("18446744073709551615", "-11697"), QV_EINVAL,
             "batches[0].columns[0].DATA[0]: \"18446744073709551615\" is out of the range of "
             "duration");
  read_fails(UNSIGNED_FORMS("9223372036854775808", "-11697"), QV_EINVAL,
             "\"9223372036854775808\" is out of the range of duration");
  read_fails(UNSIGNED_FORMS("-3", "340282366920938463463374607431768199759"), QV_EINVAL,
             "batches[0].columns[1].DATA[0]: \"340282366920938463463374607431768199759\" is out "
             "of the range of a signed 128-bit decimal");
  QvJsonFile *edge = read_ok(UNSIGNED_FORMS("9223372036854775807", "-11697"));
  qv_json_file_free(edge);
  edge = read_ok(UNSIGNED_FORMS("-9223372036854775808", "-11697"));
  qv_json_file_free(edge);

  const char *text = UNSIGNED_FORMS("18446744073709551615", "340282366920938463463374607431768199759");
  QvJsonReadOptions o = {.struct_size = sizeof o, .accept_unsigned_spelling = true};
  QvJsonFile *f = NULL;
  QvError e;
  assert_int_equal(qv_test_json_read_text(&f, text, strlen(text), &o, &e), QV_OK);
  QvJsonData d;
  qv_json_file_data(f, &d);
  QvArrayView v;
  assert_int_equal(qv_array_view_init(&v, d.schema, &e), QV_OK);
  assert_int_equal(qv_array_view_set_array(&v, d.batches[0], QV_VALIDATE_FULL, &e), QV_OK);
  assert_int_equal(qv_array_view_get_int(&v.children[0], 0), -1);
  assert_int_equal(qv_array_view_get_int(&v.children[0], 1), -3);
  QvBytes a = qv_array_view_get_bytes(&v.children[1], 0), b = qv_array_view_get_bytes(&v.children[1], 1);
  assert_memory_equal(a.data, b.data, 16);
  qv_array_view_reset(&v);
  qv_json_file_free(f);
}

/* JSON null as the value of a null slot is not read (Arrow C++ does not
 * read null slots' values): fixed width, bool, binary, views, decimals;
 * null in a valid slot is still an error. */
static void test_null_slot_values(void **state) {
  (void)state;
  const char *text = SCHEMA1(
      FIELD_I32 ",{\"name\":\"b\",\"nullable\":true,\"type\":{\"name\":\"bool\"},\"children\":[]},"
      "{\"name\":\"s\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"children\":[]},"
      "{\"name\":\"v\",\"nullable\":true,\"type\":{\"name\":\"utf8view\"},\"children\":[]},"
      "{\"name\":\"d\",\"nullable\":true,\"type\":{\"name\":\"decimal\",\"precision\":5,\"scale\":2,"
      "\"bitWidth\":128},\"children\":[]}")
      "\"batches\":[{\"count\":2,\"columns\":["
      "{\"name\":\"x\",\"count\":2,\"VALIDITY\":[1,0],\"DATA\":[7,null]},"
      "{\"name\":\"b\",\"count\":2,\"VALIDITY\":[0,1],\"DATA\":[null,true]},"
      "{\"name\":\"s\",\"count\":2,\"VALIDITY\":[1,0],\"OFFSET\":[0,2,2],\"DATA\":[\"ab\",null]},"
      "{\"name\":\"v\",\"count\":2,\"VALIDITY\":[0,1],\"VIEWS\":[null,{\"SIZE\":1,\"INLINED\":\"z\"}],"
      "\"VARIADIC_DATA_BUFFERS\":[]},"
      "{\"name\":\"d\",\"count\":2,\"VALIDITY\":[1,0],\"DATA\":[\"-12345\",null]}]}]}";
  QvJsonFile *f = read_ok(text);
  QvJsonData d;
  qv_json_file_data(f, &d);
  QvArrayView v;
  QvError e;
  assert_int_equal(qv_array_view_init(&v, d.schema, &e), QV_OK);
  assert_int_equal(qv_array_view_set_array(&v, d.batches[0], QV_VALIDATE_FULL, &e), QV_OK);
  assert_int_equal(qv_array_view_get_int(&v.children[0], 0), 7);
  assert_true(qv_array_view_is_null(&v.children[0], 1));
  assert_true(qv_array_view_is_null(&v.children[1], 0));
  assert_true(qv_array_view_is_null(&v.children[2], 1));
  assert_true(qv_array_view_is_null(&v.children[3], 0));
  QvBytes z = qv_array_view_get_bytes(&v.children[3], 1);
  assert_true(z.size == 1 && z.data[0] == 'z');
  assert_true(qv_array_view_is_null(&v.children[4], 1));
  qv_array_view_reset(&v);
  qv_json_file_free(f);
  /* and the same file equals one with values in the null slots */
  char *filled = replace(text, "[7,null]", "[7,123]");
  QvJsonFile *g = read_ok(filled), *h = read_ok(text);
  assert_int_equal(compare(h, g, &e), QV_OK);
  qv_json_file_free(g);
  qv_json_file_free(h);
  free(filled);
  char *valid_null = replace(text, "\"VALIDITY\":[1,0],\"DATA\":[7,null]", "\"VALIDITY\":[1,1],\"DATA\":[7,null]");
  read_fails(valid_null, QV_EINVAL, "batches[0].columns[0].DATA[1]: expected an integer, found null");
  free(valid_null);
}

/* A dictionary listed before the dictionary its values refer to (id 1 is
 * list<dictionary 0>, and field "d" shares id 0). */
static const char k_nested_dicts[] =
    "{\"schema\":{\"fields\":[{\"name\":\"nd\",\"nullable\":true,\"type\":{\"name\":\"list\"},\"dicti"
    "onary\":{\"id\":1,\"indexType\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":true},\"isOrdered\""
    ":false},\"children\":[{\"name\":\"item\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"childr"
    "en\":[],\"dictionary\":{\"id\":0,\"indexType\":{\"name\":\"int\",\"bitWidth\":8,\"isSigned\":tru"
    "e},\"isOrdered\":false}}]},{\"name\":\"d\",\"nullable\":true,\"type\":{\"name\":\"utf8\"},\"chil"
    "dren\":[],\"dictionary\":{\"id\":0,\"indexType\":{\"name\":\"int\",\"bitWidth\":16,\"isSigned\":"
    "true},\"isOrdered\":false}}]},\"dictionaries\":[{\"id\":1,\"data\":{\"count\":2,\"columns\":[{\""
    "name\":\"D1\",\"count\":2,\"VALIDITY\":[1,1],\"OFFSET\":[0,2,3],\"children\":[{\"name\":\"item\""
    ",\"count\":3,\"VALIDITY\":[1,1,1],\"DATA\":[1,0,1]}]}]}},{\"id\":0,\"data\":{\"count\":2,\"colum"
    "ns\":[{\"name\":\"D0\",\"count\":2,\"VALIDITY\":[1,1],\"OFFSET\":[0,1,3],\"DATA\":[\"x\",\"yz\"]"
    "}]}}],\"batches\":[{\"count\":2,\"columns\":[{\"name\":\"nd\",\"count\":2,\"VALIDITY\":[1,1],\"D"
    "ATA\":[1,0]},{\"name\":\"d\",\"count\":2,\"VALIDITY\":[1,0],\"DATA\":[1,0]}]}]}";

static void test_nested_dictionary_order(void **state) {
  (void)state;
  QvJsonFile *f = read_ok(k_nested_dicts);
  QvJsonData d;
  qv_json_file_data(f, &d);
  QvArrayView v;
  QvError e;
  assert_int_equal(qv_array_view_init(&v, d.schema, &e), QV_OK);
  assert_int_equal(qv_array_view_set_array(&v, d.batches[0], QV_VALIDATE_FULL, &e), QV_OK);
  char *text;
  assert_int_equal(qv_array_view_format_value(&v.children[0], 0, 0, &text, &e), QV_OK);
  assert_string_equal(text, "[\"yz\"]");
  free(text);
  assert_int_equal(qv_array_view_format_value(&v.children[0], 1, 0, &text, &e), QV_OK);
  assert_string_equal(text, "[\"yz\", \"x\"]");
  free(text);
  qv_array_view_reset(&v);
  char *again = write_ok(&d);
  QvJsonFile *g = read_ok(again);
  assert_int_equal(compare(f, g, &e), QV_OK);
  free(again);
  qv_json_file_free(g);
  qv_json_file_free(f);
}

/* Nesting beyond the schema depth limit, and beyond jansson's own. */
static void test_deep_nesting(void **state) {
  (void)state;
  size_t cap = 200000, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n, "{\"schema\":{\"fields\":[");
  for (int i = 0; i < 100; i++)
    n += (size_t)snprintf(t + n, cap - n, "{\"name\":\"l\",\"nullable\":true,\"type\":{\"name\":\"list\"},\"children\":[");
  n += (size_t)snprintf(t + n, cap - n, FIELD_I32);
  for (int i = 0; i < 100; i++) n += (size_t)snprintf(t + n, cap - n, "]}");
  snprintf(t + n, cap - n, "]},\"batches\":[]}");
  read_fails(t, QV_EINVAL, "fields nested deeper than");
  n = 0;
  for (int i = 0; i < 5000; i++) t[n++] = '[';
  t[n] = '\0';
  read_fails(t, QV_EINVAL, "malformed JSON");
  free(t);
}

/* Every truncation of the all-types file fails cleanly. */
static void test_truncations(void **state) {
  (void)state;
  size_t n = strlen(k_all_types);
  for (size_t cut = 0; cut < n; cut += 97) {
    QvJsonFile *f = NULL;
    QvError e;
    assert_int_equal(qv_test_json_read_text(&f, k_all_types, cut, NULL, &e), QV_EINVAL);
    assert_null(f);
  }
}

/* A record batch file written by Arrow C++, read with quiver's IPC reader,
 * through integration JSON and back: the data compares equal, and every
 * value equals what Arrow C++ itself read from the file (the "values" of the
 * companion .json, compared as JSON). Returns the number of batches. */
static int64_t check_arrow_cpp_file(const char *name) {
  char base[256];
  snprintf(base, sizeof base, "%s", name);
  char *dot = strrchr(base, '.');
  *dot = '\0';
  char desc_name[300];
  snprintf(desc_name, sizeof desc_name, "%s.json", base);
  QvError e;
  json_error_t je;
  json_t *desc = json_load_file(qv_test_shared_path(desc_name), 0, &je);
  if (desc == NULL) fail_msg("%s: %s", desc_name, je.text);

  struct ArrowArrayStream stream;
  struct ArrowSchema schema;
  QvSource *src = NULL;
  if (qv_source_new_path(&src, qv_test_shared_path(name), &e) != QV_OK ||
      qv_rb_stream_reader_new(&stream, src, NULL, &e) != QV_OK)
    fail_msg("%s: %s", name, e.message);
  qv_source_free(src); /* the reader holds its own reference */
  assert_int_equal(qv_rb_stream_get_schema(&stream, &schema, &e), QV_OK);
  struct ArrowArray batches[16];
  const struct ArrowArray *ptrs[16];
  int64_t n = 0;
  for (;;) {
    assert_true(n < 16);
    QvStatus st = qv_rb_stream_get_next(&stream, &batches[n], &e);
    if (st == QV_EOS) break;
    if (st != QV_OK) fail_msg("%s: %s", name, e.message);
    ptrs[n] = &batches[n];
    n++;
  }
  QvJsonData d = {&schema, ptrs, n, NULL, 0};
  char *text = write_ok(&d);
  QvJsonFile *f = read_ok(text);
  QvJsonData dj;
  qv_json_file_data(f, &dj);
  if (qv_json_compare(&d, &dj, NULL, &e) != QV_OK) fail_msg("%s: %s", name, e.message);

  const json_t *dbatches = json_object_get(desc, "batches");
  assert_int_equal((int64_t)json_array_size(dbatches), dj.n_batches);
  QvArrayView v;
  assert_int_equal(qv_array_view_init(&v, dj.schema, &e), QV_OK);
  for (int64_t b = 0; b < dj.n_batches; b++) {
    const json_t *db = json_array_get(dbatches, (size_t)b);
    assert_int_equal(qv_array_view_set_array(&v, dj.batches[b], QV_VALIDATE_FULL, &e), QV_OK);
    assert_int_equal(json_integer_value(json_object_get(db, "num_rows")), v.length);
    const json_t *cols = json_object_get(db, "columns");
    assert_int_equal((int64_t)json_array_size(cols), v.n_children);
    for (int64_t c = 0; c < v.n_children; c++) {
      const json_t *values = json_object_get(json_array_get(cols, (size_t)c), "values");
      for (int64_t i = 0; i < v.length; i++) {
        char *cell;
        assert_int_equal(qv_array_view_format_value(&v.children[c], i, 0, &cell, &e), QV_OK);
        json_t *got = json_loads(cell, JSON_DECODE_ANY, &je);
        const json_t *want = json_array_get(values, (size_t)i);
        if (got == NULL || !json_equal(got, want)) {
          char *w = json_dumps(want, JSON_ENCODE_ANY);
          fail_msg("%s: batch %lld, column %lld, row %lld: Arrow C++ read %s, quiver %s", name,
                   (long long)b, (long long)c, (long long)i, w, cell);
        }
        json_decref(got);
        free(cell);
      }
    }
  }
  qv_array_view_reset(&v);
  qv_json_file_free(f);
  free(text);
  for (int64_t i = 0; i < n; i++) batches[i].release(&batches[i]);
  schema.release(&schema);
  stream.release(&stream);
  json_decref(desc);
  return n;
}

/* The record batch files Arrow C++ wrote (the companion .json files are
 * descriptions of another form, not integration JSON: none of the shared
 * files is integration JSON to read directly). */
static void test_arrow_cpp_record_batches(void **state) {
  (void)state;
  if (!qv_test_have_shared()) {
    print_message("shared Arrow C++ test data absent\n");
    skip();
  }
  size_t size;
  uint8_t *manifest = qv_test_read_file(qv_test_shared_path("MANIFEST.txt"), &size);
  assert_non_null(manifest);
  char *text = malloc(size + 1);
  memcpy(text, manifest, size);
  text[size] = '\0';
  free(manifest);
  int files = 0;
  int64_t batches = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (strncmp(line, "rb_", 3) != 0) continue;
    batches += check_arrow_cpp_file(line);
    files++;
  }
  free(text);
  assert_true(files >= 6);
  assert_true(batches >= 8);
}

static void test_api_arguments(void **state) {
  (void)state;
  QvError e;
  QvJsonFile *f = NULL;
  assert_int_equal(qv_json_read(NULL, NULL, NULL, &e), QV_EARG);
  /* a newer caller's option this library does not know */
  struct {
    QvJsonReadOptions o;
    int64_t newer;
  } big = {{.struct_size = sizeof big}, 1};
  assert_int_equal(qv_test_json_read_text(&f, "{}", 2, &big.o, &e), QV_ENOTSUP);
  qv_json_file_free(NULL);
  QvJsonData none;
  qv_json_file_data(NULL, &none);
  assert_null(none.schema);
  char *text;
  assert_int_equal(qv_test_json_write_text(&none, NULL, &text, NULL, &e), QV_EARG);
  f = read_ok(k_all_types);
  int64_t id;
  const struct ArrowArray *values;
  const struct ArrowSchema *type;
  assert_int_equal(qv_json_file_dictionary(f, 1, &id, &values, &type, &e), QV_OK);
  assert_int_equal(id, 1);
  assert_int_equal(values->length, 2);
  assert_string_equal(type->format, "+l");
  assert_int_equal(qv_json_file_dictionary(f, 2, &id, &values, &type, &e), QV_EARG);
  /* ids that do not match the schema */
  QvJsonData d;
  qv_json_file_data(f, &d);
  d.n_dictionary_ids = 1;
  assert_int_equal(qv_test_json_write_text(&d, NULL, &text, NULL, &e), QV_EARG);
  qv_json_file_free(f);
  /* a dictionary of dictionary-encoded values has no JSON form */
  struct ArrowSchema s;
  assert_int_equal(qv_arrow_schema_init(&s, "+s", "", 0, 1, &e), QV_OK);
  assert_int_equal(qv_arrow_schema_init(s.children[0], "c", "dd", ARROW_FLAG_NULLABLE, 0, &e), QV_OK);
  assert_int_equal(qv_arrow_schema_alloc_dictionary(s.children[0], &e), QV_OK);
  assert_int_equal(qv_arrow_schema_init(s.children[0]->dictionary, "c", NULL, 0, 0, &e), QV_OK);
  assert_int_equal(qv_arrow_schema_alloc_dictionary(s.children[0]->dictionary, &e), QV_OK);
  assert_int_equal(qv_arrow_schema_init(s.children[0]->dictionary->dictionary, "u", NULL, 0, 0, &e), QV_OK);
  QvJsonData dd = {&s, NULL, 0, NULL, 0};
  assert_int_equal(qv_test_json_write_text(&dd, NULL, &text, NULL, &e), QV_ENOTSUP);
  assert_non_null(strstr(e.message, "field \"dd\""));
  s.release(&s);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_all_types),   cmocka_unit_test(test_decimal_precision),   cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_slices),           cmocka_unit_test(test_gzip),
      cmocka_unit_test(test_float_specials),   cmocka_unit_test(test_float_tolerance),
      cmocka_unit_test(test_compare_value),    cmocka_unit_test(test_compare_validity),
      cmocka_unit_test(test_compare_field_name), cmocka_unit_test(test_compare_metadata),
      cmocka_unit_test(test_compare_metadata_order),
      cmocka_unit_test(test_compare_map_names),
      cmocka_unit_test(test_compare_dictionary), cmocka_unit_test(test_compare_shape),
      cmocka_unit_test(test_bad_input),        cmocka_unit_test(test_unsigned_forms),
      cmocka_unit_test(test_null_slot_values),
      cmocka_unit_test(test_nested_dictionary_order),
      cmocka_unit_test(test_deep_nesting),
      cmocka_unit_test(test_truncations),      cmocka_unit_test(test_api_arguments),
  };
  const struct CMUnitTest shared[] = {cmocka_unit_test(test_arrow_cpp_record_batches)};
  const QvTestGroup groups[] = {
      QV_TEST_GROUP("", tests, NULL, NULL),
      QV_TEST_GROUP("shared", shared, NULL, NULL),
  };
  return qv_test_run_groups(argc, argv, groups, sizeof groups / sizeof groups[0]);
}

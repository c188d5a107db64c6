/* The host-op table: the one place mapping an op id (model_abi.h's enum onnxc_host_op) to the entry
 * its family's file defines. */
#include "host_op.h"

/* The entries, each defined beside its op (host_*.c). Only this table names them. */
extern const onnxc_host_op_info onnxc_host_nonzero, onnxc_host_compress, onnxc_host_unique, onnxc_host_nms,
    onnxc_host_reduce_sum, onnxc_host_tfidf, onnxc_host_value_size, onnxc_host_string_normalizer, onnxc_host_string_cast,
    onnxc_host_string_concat, onnxc_host_string_equal, onnxc_host_cache_append, onnxc_host_cache_scatter, onnxc_host_reduce,
    onnxc_host_string_split, onnxc_host_regex_full_match, onnxc_host_scan_slice, onnxc_host_scan_append,
    onnxc_host_scan_collect, onnxc_host_value_copy, onnxc_host_value_empty, onnxc_host_seq_insert, onnxc_host_seq_at,
    onnxc_host_seq_erase, onnxc_host_seq_length, onnxc_host_opt_wrap, onnxc_host_opt_has, onnxc_host_opt_get,
    onnxc_host_split_to_seq;

/* Indexed by op id (model_abi.h's enum onnxc_host_op); a gap is an id this runtime does not know. */
static const onnxc_host_op_info *const kHostOps[] = {
    [ONNXC_HOST_NONZERO] = &onnxc_host_nonzero,
    [ONNXC_HOST_COMPRESS] = &onnxc_host_compress,
    [ONNXC_HOST_UNIQUE] = &onnxc_host_unique,
    [ONNXC_HOST_NMS] = &onnxc_host_nms,
    [ONNXC_HOST_REDUCE_SUM] = &onnxc_host_reduce_sum,
    [ONNXC_HOST_TFIDF] = &onnxc_host_tfidf,
    [ONNXC_HOST_VALUE_SIZE] = &onnxc_host_value_size,
    [ONNXC_HOST_STRING_NORMALIZER] = &onnxc_host_string_normalizer,
    [ONNXC_HOST_STRING_CAST] = &onnxc_host_string_cast,
    [ONNXC_HOST_STRING_CONCAT] = &onnxc_host_string_concat,
    [ONNXC_HOST_CACHE_APPEND] = &onnxc_host_cache_append,
    [ONNXC_HOST_CACHE_SCATTER] = &onnxc_host_cache_scatter,
    [ONNXC_HOST_REDUCE] = &onnxc_host_reduce,
    [ONNXC_HOST_STRING_SPLIT] = &onnxc_host_string_split,
    [ONNXC_HOST_REGEX_FULL_MATCH] = &onnxc_host_regex_full_match,
    [ONNXC_HOST_STRING_EQUAL] = &onnxc_host_string_equal,
    [ONNXC_HOST_SCAN_SLICE] = &onnxc_host_scan_slice,
    [ONNXC_HOST_SCAN_APPEND] = &onnxc_host_scan_append,
    [ONNXC_HOST_SCAN_COLLECT] = &onnxc_host_scan_collect,
    [ONNXC_HOST_VALUE_COPY] = &onnxc_host_value_copy,
    [ONNXC_HOST_VALUE_EMPTY] = &onnxc_host_value_empty,
    [ONNXC_HOST_SEQ_INSERT] = &onnxc_host_seq_insert,
    [ONNXC_HOST_SEQ_AT] = &onnxc_host_seq_at,
    [ONNXC_HOST_SEQ_ERASE] = &onnxc_host_seq_erase,
    [ONNXC_HOST_SEQ_LENGTH] = &onnxc_host_seq_length,
    [ONNXC_HOST_OPT_WRAP] = &onnxc_host_opt_wrap,
    [ONNXC_HOST_OPT_HAS] = &onnxc_host_opt_has,
    [ONNXC_HOST_OPT_GET] = &onnxc_host_opt_get,
    [ONNXC_HOST_SPLIT_TO_SEQ] = &onnxc_host_split_to_seq,
};

const onnxc_host_op_info *onnxc_host_op_lookup(int32_t op) {
  if (op < 0 || (size_t)op >= sizeof kHostOps / sizeof kHostOps[0]) return NULL;
  return kHostOps[op];
}

/* Seals: a library reader that validated a sparse tensor in full, over
 * buffers no caller can write, marks it so that writing or converting it
 * again does not re-validate what it validated; a conversion's result
 * (valid by construction, in buffers of its own) is sealed the same way. The mark is a snapshot of every public
 * field (and of the shape values) kept in the tensor's private store: a
 * caller that edits the struct, or builds another one around the same
 * store, no longer matches it and is validated as usual. Views over caller
 * memory (qv_sparse_init) are sealed only when the caller vouches that
 * nothing writes their indices (QvSparseDesc.immutable): otherwise their
 * owner may change the bytes at any time. */
#ifndef QV_SPARSE_SEAL_H
#define QV_SPARSE_SEAL_H

#include <stdbool.h>

#include "quiver/sparse.h"

/* Seals t (a COO, CSR or CSC tensor qv_sparse_init just validated, or a
 * conversion just made, whose buffers are the library's or a read-only
 * mapping, or a CSR/CSC qv_sparse_canonicalize made and validated); CSF is
 * left unsealed. */
void qvi_sp_seal(QvSparseTensor *t);
/* Whether t is sealed and unchanged since: then it is valid. */
bool qvi_sp_sealed(const QvSparseTensor *t);

#endif

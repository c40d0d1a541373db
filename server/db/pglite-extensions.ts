import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

/** pg_trgm and btree_gin: the gallery's per-user prompt search index (migrations 0004, 0006). */
export const PGLITE_EXTENSIONS = { pg_trgm, btree_gin };

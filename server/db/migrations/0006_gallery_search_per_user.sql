-- The prompt search reads only the searching user's entries: with btree_gin the user id
-- is a key of the same GIN index as the prompt's trigrams, so a word common in other
-- users' prompts no longer costs this user's search anything.
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "images_user_prompt_trgm_idx" ON "images" USING gin ("user_id", "prompt" gin_trgm_ops);--> statement-breakpoint
DROP INDEX IF EXISTS "images_prompt_trgm_idx";

-- The gallery's prompt search (ILIKE '%...%') reads this trigram index instead of every
-- prompt. PGlite loads the extension's code from the constructor's `extensions`
-- (server/db/client.ts); PostgreSQL ships it in contrib.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "images_prompt_trgm_idx" ON "images" USING gin ("prompt" gin_trgm_ops);

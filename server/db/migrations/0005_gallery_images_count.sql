ALTER TABLE "users" ADD COLUMN "images_count" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Existing images are counted once; from here on the triggers keep the figure, whatever
-- code path inserts or deletes images (a statement's rows are counted per user at once).
UPDATE "users" SET "images_count" = c.n FROM (SELECT "user_id", count(*)::integer AS n FROM "images" GROUP BY "user_id") c WHERE "users"."id" = c."user_id";--> statement-breakpoint
CREATE FUNCTION "images_count_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "users" SET "images_count" = "images_count" + c.n
  FROM (SELECT "user_id", count(*)::integer AS n FROM inserted GROUP BY "user_id") c
  WHERE "users"."id" = c."user_id";
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE FUNCTION "images_count_deleted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "users" SET "images_count" = "images_count" - c.n
  FROM (SELECT "user_id", count(*)::integer AS n FROM deleted GROUP BY "user_id") c
  WHERE "users"."id" = c."user_id";
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "images_count_insert" AFTER INSERT ON "images" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION "images_count_inserted"();--> statement-breakpoint
CREATE TRIGGER "images_count_delete" AFTER DELETE ON "images" REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION "images_count_deleted"();

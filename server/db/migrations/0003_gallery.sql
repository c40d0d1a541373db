DROP INDEX "images_user_created_idx";--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "negative_prompt" text;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "aspect_ratio" text;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "model_variant" text;--> statement-breakpoint
ALTER TABLE "images" ADD COLUMN "thumbnail_file_name" text;--> statement-breakpoint
CREATE INDEX "images_user_created_idx" ON "images" USING btree ("user_id","created_at","id");
CREATE TABLE "user_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"type" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "kind" text DEFAULT 'generation' NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "lane" text DEFAULT 'images' NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "input" jsonb;--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "photo" "bytea";--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "started_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "claimed_by" text;--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "cancel_requested" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "error_code" text;--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "error_details" jsonb;--> statement-breakpoint
ALTER TABLE "generation_requests" ADD COLUMN "finished_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "active_jobs" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "user_events" ADD CONSTRAINT "user_events_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "user_events_user_idx" ON "user_events" USING btree ("user_id","id");--> statement-breakpoint
CREATE INDEX "user_events_created_idx" ON "user_events" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "generation_requests_queue_idx" ON "generation_requests" USING btree ("created_at","id") WHERE "generation_requests"."status" = 'PENDING' and "generation_requests"."started_at" is null;--> statement-breakpoint
-- Requests PENDING before jobs were durable were in flight in a request handler: they count
-- as started, so the reconciler settles them by their heartbeat as before.
UPDATE "generation_requests" SET "started_at" = "created_at" WHERE "status" = 'PENDING';--> statement-breakpoint
UPDATE "users" SET "active_jobs" = c.n FROM (SELECT "user_id", count(*)::integer AS n FROM "generation_requests" WHERE "status" = 'PENDING' GROUP BY "user_id") c WHERE "users"."id" = c."user_id";--> statement-breakpoint
-- Whatever settles a job (the worker, a cancel, the reconciler), leaving PENDING stamps
-- finished_at and drops the face photo. users.active_jobs counts the user's PENDING jobs
-- whatever writes them: the charge statement checks it on the locked user row.
CREATE FUNCTION "generation_request_settling"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD."status" = 'PENDING' AND NEW."status" <> 'PENDING' THEN
    NEW."finished_at" := coalesce(NEW."finished_at", now());
    NEW."photo" := NULL;
  END IF;
  RETURN NEW;
END $$;--> statement-breakpoint
CREATE FUNCTION "active_jobs_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE "users" SET "active_jobs" = "active_jobs" + 1 WHERE "id" = NEW."user_id";
  ELSE
    UPDATE "users" SET "active_jobs" = "active_jobs" - 1 WHERE "id" = OLD."user_id";
  END IF;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "generation_request_settling" BEFORE UPDATE OF "status" ON "generation_requests" FOR EACH ROW EXECUTE FUNCTION "generation_request_settling"();--> statement-breakpoint
CREATE TRIGGER "active_jobs_opened" AFTER INSERT ON "generation_requests" FOR EACH ROW WHEN (NEW."status" = 'PENDING') EXECUTE FUNCTION "active_jobs_changed"();--> statement-breakpoint
CREATE TRIGGER "active_jobs_settled" AFTER UPDATE OF "status" ON "generation_requests" FOR EACH ROW WHEN (OLD."status" = 'PENDING' AND NEW."status" <> 'PENDING') EXECUTE FUNCTION "active_jobs_changed"();--> statement-breakpoint
CREATE TRIGGER "active_jobs_deleted" AFTER DELETE ON "generation_requests" FOR EACH ROW WHEN (OLD."status" = 'PENDING') EXECUTE FUNCTION "active_jobs_changed"();

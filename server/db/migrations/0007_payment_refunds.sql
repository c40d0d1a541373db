CREATE TABLE "payment_refunds" (
	"id" serial PRIMARY KEY NOT NULL,
	"payment_id" text NOT NULL,
	"user_id" integer NOT NULL,
	"provider_refund_id" text NOT NULL,
	"origin" text NOT NULL,
	"attempt" integer DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"amount_kopecks" integer NOT NULL,
	"cancellation_reason" text,
	"tokens_taken" integer DEFAULT 0 NOT NULL,
	"tokens_unrecovered" integer DEFAULT 0 NOT NULL,
	"settled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "payment_refunds" ADD CONSTRAINT "payment_refunds_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_refunds" ADD CONSTRAINT "payment_refunds_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_refunds_provider_key" ON "payment_refunds" USING btree ("provider_refund_id");--> statement-breakpoint
CREATE UNIQUE INDEX "payment_refunds_attempt_key" ON "payment_refunds" USING btree ("payment_id","attempt") WHERE origin = 'ours';--> statement-breakpoint
CREATE INDEX "payment_refunds_payment_idx" ON "payment_refunds" USING btree ("payment_id");--> statement-breakpoint
CREATE INDEX "payment_refunds_status_idx" ON "payment_refunds" USING btree ("status");--> statement-breakpoint
-- Before the index: of several first payments left pending for one subscription, the newest
-- stays; the others are closed as superseded (a late success is still settled and refunded).
UPDATE "payments" SET "status" = 'canceled', "cancellation_reason" = 'superseded', "updated_at" = now()
WHERE "status" = 'pending' AND "purpose" IN ('trial_verification', 'subscription_first')
  AND "id" NOT IN (
    SELECT DISTINCT ON ("subscription_id") "id" FROM "payments"
    WHERE "status" = 'pending' AND "purpose" IN ('trial_verification', 'subscription_first')
    ORDER BY "subscription_id", "created_at" DESC, "id" DESC
  );--> statement-breakpoint
CREATE UNIQUE INDEX "payments_first_pending_key" ON "payments" USING btree ("subscription_id") WHERE status = 'pending' and purpose in ('trial_verification', 'subscription_first');
ALTER TABLE "chat_requests" ADD COLUMN "partial_content" text;--> statement-breakpoint
ALTER TABLE "chat_requests" ADD COLUMN "stop_requested" boolean DEFAULT false NOT NULL;
-- One row group; each ? becomes the next $N. Text casts let every driver
-- bind plain strings.
(?::text::uuid, ?, ?, ?, ?, ?::text::json, ?, ?::text::json, ?, ?, ?, ?, ?::integer)

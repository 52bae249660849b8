-- 0004: the band of a fold's predicted cold tokens: where the
-- harness's prediction may fall, low and high, beside predicted_cold. NULL
-- where no band was predicted (a quote without a harness prediction).
ALTER TABLE rewrites ADD COLUMN predicted_cold_low INTEGER;
ALTER TABLE rewrites ADD COLUMN predicted_cold_high INTEGER;

// Package sqlkit holds the helpers the dialect packages share: loading
// embedded SQL files for a validated table name (Statements: shared
// fragments, constants) with named parameters bound by name (Query, Bind),
// the cached multi-row INSERT builder, header encoding, time scanning, the scans of reads and
// inspections (which return a row with a column that cannot be decoded as
// a bad row, dialects.RowError, instead of failing), error-text truncation
// and requeue-filter validation. It contains no SQL of its own.
package sqlkit

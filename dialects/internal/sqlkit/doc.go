// Package sqlkit holds the helpers the dialect packages share: rendering
// embedded SQL templates with a validated table name, the cached multi-row
// INSERT builder, header encoding, time scanning, error-text truncation and
// requeue-filter validation. It contains no SQL of its own.
package sqlkit

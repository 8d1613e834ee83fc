package codec_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jitoutbox/jitoutbox/codec"
)

func TestParseKeys(t *testing.T) {
	k2, k1 := key(2), key(1)
	text := "# newest first\n 2026-11:" + base64.StdEncoding.EncodeToString(k2) + "\n\n2026-10:" + base64.RawURLEncoding.EncodeToString(k1) + "\n"
	k, err := codec.ParseKeys(text)
	if err != nil {
		t.Fatal(err)
	}
	if k.CurrentKeyID() != "2026-11" || !slices.Equal(k.IDs(), []string{"2026-11", "2026-10"}) {
		t.Fatalf("current %q, ids %v", k.CurrentKeyID(), k.IDs())
	}
	if got, err := k.Key("2026-10"); err != nil || !bytes.Equal(got, k1) {
		t.Fatalf("Key(2026-10) = %x, %v", got, err)
	}
	if _, err := k.Key("2026-09"); !errors.Is(err, codec.ErrUnknownKey) {
		t.Fatalf("Key(2026-09) = %v", err)
	}
	// Commas separate entries too (one environment variable).
	k, err = codec.ParseKeys("b:" + base64.StdEncoding.EncodeToString(k2) + ", a:" + base64.StdEncoding.EncodeToString(k1))
	if err != nil || k.CurrentKeyID() != "b" || len(k.IDs()) != 2 {
		t.Fatalf("comma form: %v, %v", k, err)
	}
}

func TestKeysFromEnvAndFile(t *testing.T) {
	text := "k2:" + base64.StdEncoding.EncodeToString(key(2)) + "\nk1:" + base64.StdEncoding.EncodeToString(key(1)) + "\n"
	t.Setenv("CODEC_TEST_KEYS", text)
	k, err := codec.KeysFromEnv("CODEC_TEST_KEYS")
	if err != nil || k.CurrentKeyID() != "k2" {
		t.Fatalf("KeysFromEnv: %v", err)
	}
	if _, err := codec.KeysFromEnv("CODEC_TEST_KEYS_UNSET"); !errors.Is(err, codec.ErrInvalidKey) {
		t.Fatalf("unset variable: %v", err)
	}
	t.Setenv("CODEC_TEST_KEYS", "k1:c2hvcnQ=")
	if _, err := codec.KeysFromEnv("CODEC_TEST_KEYS"); !errors.Is(err, codec.ErrInvalidKey) {
		t.Fatalf("short key in the environment: %v", err)
	}
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err = codec.KeysFromFile(path)
	if err != nil || k.CurrentKeyID() != "k2" {
		t.Fatalf("KeysFromFile: %v", err)
	}
	if _, err := codec.KeysFromFile(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

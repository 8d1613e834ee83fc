package mysql_test

import (
	"testing"

	"github.com/jitoutbox/jitoutbox/dialects/dialecttest"
)

func TestInspect(t *testing.T) {
	dialecttest.ExerciseInspect(t, target(true))
}

package web_test

import (
	"testing"

	"github.com/fundsource/fundsource/internal/testing/pgtest"
	"github.com/fundsource/fundsource/internal/testing/webtest"
)

func TestMain(m *testing.M) { pgtest.Main(m, webtest.StopBrowser) }

package main

import (
	"strings"
	"testing"
)

// token add of a name no owner may have says so in the owner's terms.
func TestTokenAddBadOwnerName(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[http]\ntokens_file = \"tokens.toml\"\n")
	code, _, errOut := runCLI(t, "token", "add", "bad name!", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, `invalid owner name "bad name!"`) || strings.Contains(errOut, "agent identity") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

package oauth

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// EnvBrowser names the environment variable holding the command that
// opens the authorization URL (its words split on spaces, the URL added
// as the last argument). Unset: the system's opener.
const EnvBrowser = "SCRATCHPAD_BROWSER"

// OpenBrowser opens authURL with the command in $SCRATCHPAD_BROWSER (the
// URL its last argument), else the system's opener (xdg-open, open,
// rundll32). It does not wait for the browser.
func OpenBrowser(authURL string) error {
	var argv []string
	if b := strings.Fields(os.Getenv(EnvBrowser)); len(b) > 0 {
		argv = append(b, authURL)
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", authURL}
		case "windows":
			argv = []string{"rundll32", "url.dll,FileProtocolHandler", authURL}
		default:
			argv = []string{"xdg-open", authURL}
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

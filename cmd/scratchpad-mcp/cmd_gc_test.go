package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// oldFile writes a file under mem, age old.
func oldFile(t *testing.T, mem, rel string, size int, age time.Duration) string {
	t.Helper()
	p := filepath.Join(mem, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("y", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	mt := time.Now().Add(-age)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
	return p
}

func gone(p string) bool { _, err := os.Lstat(p); return os.IsNotExist(err) }

func TestGCCommand(t *testing.T) {
	cfg, mem := writeConfig(t, "\n[retention]\nmax_age = \"2d\"\nruns_max_age = \"10d\"\n")
	day := 24 * time.Hour
	oldOut := oldFile(t, mem, "scratchpad/k8s-listing-aaaa.json", 5000, 3*day)
	newOut := oldFile(t, mem, "scratchpad/k8s-listing-bbbb.json", 5000, day)
	oldRun := oldFile(t, mem, "r-old/artifacts/report.md", 100, 11*day)
	padMD := oldFile(t, mem, "pad/pad.md", 100, 100*day)
	leftover := oldFile(t, mem, "r-new/artifacts/.tmp-0102-report.md", 10, time.Hour)
	newRun := oldFile(t, mem, "r-new/artifacts/report.md", 100, day)

	code, out, errOut := runCLI(t, "gc", "--config", cfg, "--dry-run")
	if code != 0 {
		t.Fatalf("gc --dry-run: %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"dry run: nothing removed", "outputs", "would remove", "max_age:", "1 file(s), 4.9 KiB", "runs_max_age:", "leftover:"} {
		if !strings.Contains(out, want) {
			t.Errorf("gc --dry-run output lacks %q:\n%s", want, out)
		}
	}
	if gone(oldOut) || gone(oldRun) || gone(leftover) {
		t.Fatal("dry run removed files")
	}
	code, out, errOut = runCLI(t, "gc", "--config", cfg)
	if code != 0 || !strings.Contains(out, "removed 3 file(s)") {
		t.Fatalf("gc: %d\n%s\n%s", code, out, errOut)
	}
	for _, p := range []string{oldOut, filepath.Dir(filepath.Dir(oldRun)), leftover} {
		if !gone(p) {
			t.Errorf("%s not removed", p)
		}
	}
	for _, p := range []string{newOut, padMD, newRun} {
		if gone(p) {
			t.Errorf("%s removed", p)
		}
	}
	if code, _, errOut := runCLI(t, "gc", "--config", cfg, "extra"); code != 2 || !strings.Contains(errOut, "unexpected") {
		t.Errorf("gc extra: %d %s", code, errOut)
	}
}

func TestDoctorReportsRetention(t *testing.T) {
	cfg, mem := writeConfig(t, "\n[retention]\nmax_age = \"2d\"\n")
	oldFile(t, mem, "scratchpad/x.json", 3000, 3*24*time.Hour)
	oldFile(t, mem, "r1/artifacts/a.md", 2000, time.Hour)
	_, out, _ := runCLI(t, "doctor", "--config", cfg, "--timeout", "20s")
	for _, want := range []string{"retention: max_age 2d, runs_max_age 30d", "next sweep:", "artifacts", "2.0 KiB", "max_age:      1 file(s), 2.9 KiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}

// serve sweeps at start, in the background, and logs what it removed.
func TestServeSweepsAtStart(t *testing.T) {
	cfg, mem := writeConfig(t, "\n[retention]\nmax_age = \"1d\"\n")
	old := oldFile(t, mem, "scratchpad/k8s-listing-cccc.json", 4000, 2*24*time.Hour)
	keep := oldFile(t, mem, "scratchpad/k8s-listing-dddd.json", 4000, time.Hour)
	cmd := exec.Command(binary(t), "serve", "--config", cfg, "--transport", "http", "--addr", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "retention sweep") {
				line <- sc.Text()
			}
		}
	}()
	select {
	case l := <-line:
		for _, want := range []string{"when=start", "removed=1", "freed=4000", "outputs=1"} {
			if !strings.Contains(l, want) {
				t.Errorf("log line lacks %s: %s", want, l)
			}
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no retention sweep logged")
	}
	if !gone(old) || gone(keep) {
		t.Fatalf("old removed %v, new kept %v", gone(old), !gone(keep))
	}
}

// Package redisurl owns what a Redis URL may be: the one check that the
// config ([pad] redis_url) and the pad's Redis client both apply, so a URL
// the config accepts is one the client can use, and no message of either
// ever shows its password.
package redisurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Check validates a Redis URL (what go-redis accepts, and a host,
// port and database number that make sense) and returns it with the
// password redacted, for messages. err says why the URL cannot be used,
// without the URL; redacted is "" when it does not even parse. Neither
// ever contains the password.
func Check(raw string) (redacted string, err error) {
	if strings.TrimSpace(raw) == "" {
		return "", errors.New("empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep only
		// the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", err
	}
	redacted = u.Redacted()
	switch {
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return redacted, errors.New("want a redis:// or rediss:// URL")
	case u.Hostname() == "":
		return redacted, errors.New("no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return redacted, fmt.Errorf("invalid port %q", p)
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 {
			return redacted, fmt.Errorf("the path must be a database number, got %q", db)
		}
	}
	// go-redis checks the query options (dial_timeout=3s, …); its
	// messages never include the password.
	if _, err := redis.ParseURL(raw); err != nil {
		return redacted, errors.New(strings.TrimPrefix(err.Error(), "redis: "))
	}
	return redacted, nil
}

// Quiet drops go-redis's own log lines (a dial failure per attempt, on
// stderr) for the whole process: every failure already reaches its caller
// as an error naming the config key. Each client's constructor calls it.
func Quiet() { quietOnce.Do(func() { redis.SetLogger(quietLogger{}) }) }

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

var quietOnce sync.Once

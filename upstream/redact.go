package upstream

import (
	"errors"
	"net/http"
	"net/url"
)

// masked stands for a secret in a URL shown to a person or a model.
const masked = "xxxxx"

// RedactURL is raw with its secrets masked, for messages, logs and
// doctor: the userinfo's password and the value of every query parameter
// (api_key=…, token=…) become "xxxxx"; the scheme, host, path and the
// parameters' names stay, so the URL is still recognisable. A URL that
// does not parse is not shown at all.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparseable URL)"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), masked)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			for i := range vs {
				vs[i] = masked
			}
			q[k] = vs
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// do is hc.Do with the URL in its error masked ([RedactURL]): such errors
// reach logs and, as tool errors, the model.
func do(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = RedactURL(ue.URL)
	}
	return resp, err
}

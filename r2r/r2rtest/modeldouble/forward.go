package modeldouble

import (
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
)

// parseUpstream checks an Options.EmbeddingsUpstream value: an absolute http(s) base URL
// such as http://127.0.0.1:PORT/v1.
func parseUpstream(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("embeddings upstream %q is not an http(s) base URL like http://127.0.0.1:PORT/v1", s)
	}
	return u, nil
}

// forwardEmbeddings returns the handler that sends every embeddings request, body and
// headers as they came, to upstream + "/embeddings" and relays its answer as it is; a
// failure to reach upstream is answered 502 with an OpenAI error body.
func (d *Double) forwardEmbeddings(upstream *url.URL) http.HandlerFunc {
	target := *upstream
	target.Path = strings.TrimSuffix(target.Path, "/") + "/embeddings"
	target.RawPath = ""
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &url.URL{Scheme: target.Scheme, Host: target.Host, Path: target.Path}
			pr.Out.Host = target.Host
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeError(w, http.StatusBadGateway, "the embeddings upstream did not answer: "+err.Error(), "")
		},
	}
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, d.opts.MaxBodyBytes)
		proxy.ServeHTTP(w, r)
	}
}

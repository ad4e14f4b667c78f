package knob

import (
	"strings"
	"testing"
	"time"
)

type inner struct {
	Wait  time.Duration `knob:"wait" default:"2s" min:"1ms" max:"1m" zero:"off" help:"how long to wait"`
	Fixed time.Duration `default:"45s"`
}

type settings struct {
	Inner inner
	Size  int64    `knob:"size" unit:"bytes" default:"16MiB" min:"64KiB" max:"1GiB" help:"memory"`
	Count uint32   `knob:"count" default:"5" min:"1" max:"10" help:"how many"`
	Rate  float64  `knob:"rate" env:"RATE" default:"2.5" min:"0" max:"100" zero:"off" help:"per second"`
	Addr  string   `knob:"addr" meta:"ADDR" zero:"off (stdio)" help:"listen here"`
	Mode  string   `knob:"mode" with:"addr" default:"user" enum:"user,shared" help:"who acts"`
	Hosts []string `knob:"hosts" with:"addr" help:"hosts accepted"`
	URL   string   `knob:"url" with:"addr" show:"host" help:"store"`
	plain int
}

func newSettings() (*settings, []Row) {
	s := &settings{}
	Defaults(s)
	return s, Rows(s)
}

func rowOf(t *testing.T, rows []Row, name string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row %q", name)
	return Row{}
}

func TestDefaultsAndRows(t *testing.T) {
	s, rows := newSettings()
	if s.Inner.Wait != 2*time.Second || s.Inner.Fixed != 45*time.Second || s.Size != 16<<20 || s.Count != 5 ||
		s.Rate != 2.5 || s.Mode != "user" || s.Addr != "" || s.Hosts != nil || s.plain != 0 {
		t.Fatalf("defaults %+v", s)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name+"="+r.Env)
	}
	want := "wait=R2R_MCP_WAIT size=R2R_MCP_SIZE count=R2R_MCP_COUNT rate=RATE addr=R2R_MCP_ADDR mode=R2R_MCP_MODE hosts=R2R_MCP_HOSTS url=R2R_MCP_URL"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("rows %s\nwant %s", got, want)
	}
}

func TestSet(t *testing.T) {
	for _, tc := range []struct {
		name, knob, in, want, wantErr string
	}{
		{name: "duration", knob: "wait", in: "300ms", want: "300ms"},
		{name: "zero duration below its bound", knob: "wait", in: "0", wantErr: "must be between 1ms and 1m0s"},
		{name: "duration over", knob: "wait", in: "2m", wantErr: "must be between"},
		{name: "not a duration", knob: "wait", in: "soon", wantErr: "want a duration"},
		{name: "size", knob: "size", in: "1.5GiB", wantErr: "must be between 64KiB and 1GiB"},
		{name: "size in bounds", knob: "size", in: "512KiB", want: "512KiB"},
		{name: "not a size", knob: "size", in: "lots", wantErr: "want a size"},
		{name: "uint", knob: "count", in: "10", want: "10"},
		{name: "uint zero", knob: "count", in: "0", wantErr: "must be between 1 and 10"},
		{name: "negative uint", knob: "count", in: "-1", wantErr: "want a whole number"},
		{name: "float", knob: "rate", in: "0.5", want: "0.5"},
		{name: "NaN", knob: "rate", in: "NaN", wantErr: "want a number"},
		{name: "negative float", knob: "rate", in: "-1", wantErr: "must be between 0 and 100"},
		{name: "enum", knob: "mode", in: "shared", want: "shared"},
		{name: "not in the enum", knob: "mode", in: "none", wantErr: "want user or shared"},
		{name: "list", knob: "hosts", in: " a.example.com, ,b.example.com", want: "a.example.com,b.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rows := newSettings()
			v := rowOf(t, rows, tc.knob).Value()
			before := v.String()
			err := v.Set(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if v.String() != before {
					t.Fatalf("a refused value changed the field: %s -> %s", before, v.String())
				}
				return
			}
			if err != nil || v.String() != tc.want {
				t.Fatalf("got %q, %v; want %q", v.String(), err, tc.want)
			}
		})
	}
}

// A list flag given twice holds both values; the first replaces the default.
func TestListAppends(t *testing.T) {
	s, rows := newSettings()
	v := rowOf(t, rows, "hosts").Value()
	if err := v.Set("a"); err != nil {
		t.Fatal(err)
	}
	if err := v.Set("b,c"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Hosts, " ") != "a b c" {
		t.Fatalf("hosts %q", s.Hosts)
	}
}

func TestApplyEnv(t *testing.T) {
	env := map[string]string{"R2R_MCP_WAIT": "5s", "RATE": " 7 ", "R2R_MCP_COUNT": "3"}
	s, rows := newSettings()
	given := func(name string) bool { return name == "count" }
	if err := ApplyEnv(rows, given, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if s.Inner.Wait != 5*time.Second || s.Rate != 7 || s.Count != 5 {
		t.Fatalf("a flag given must win over its twin, the twin over the default: %+v", s)
	}
	for _, tc := range []struct{ env, val, want string }{
		{"R2R_MCP_SIZE", "-5MiB", `invalid R2R_MCP_SIZE="-5MiB" (the environment twin of --size): want a size`},
		{"R2R_MCP_MODE", "root", "invalid R2R_MCP_MODE=\"root\" (the environment twin of --mode): want user or shared"},
	} {
		_, rows := newSettings()
		err := ApplyEnv(rows, func(string) bool { return false }, func(k string) string { return map[string]string{tc.env: tc.val}[k] })
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.env, err, tc.want)
		}
	}
}

func TestSettings(t *testing.T) {
	s, rows := newSettings()
	got := Settings(rows)
	want := map[string]string{"wait": "2s", "size": "16MiB", "count": "5", "rate": "2.5", "addr": "off (stdio)"}
	if len(got) != len(want) {
		t.Fatalf("settings %v, want %v (knobs with an unset addr are left out)", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	s.Addr, s.Rate, s.URL, s.Hosts = "127.0.0.1:8080", 0, "redis://:hunter2@redis.internal:6379/0", []string{"a", "b"}
	got = Settings(rows)
	for k, v := range map[string]string{"addr": "127.0.0.1:8080", "rate": "off", "mode": "user", "url": "redis.internal:6379", "hosts": "a,b"} {
		if got[k] != v {
			t.Errorf("with addr: %s = %q, want %q", k, got[k], v)
		}
	}
	if strings.Contains(strings.Join(func() []string {
		var out []string
		for _, v := range got {
			out = append(out, v)
		}
		return out
	}(), " "), "hunter2") {
		t.Error("a password in a URL reached the settings")
	}
}

func TestMarkdown(t *testing.T) {
	_, rows := newSettings()
	md := Markdown(rows)
	lines := strings.Split(strings.TrimSpace(md), "\n")
	if len(lines) != 2+len(rows) {
		t.Fatalf("%d lines:\n%s", len(lines), md)
	}
	for _, want := range []string{
		"| `--wait D` | `R2R_MCP_WAIT` | `2s` | `1ms` to `1m` | how long to wait |",
		"| `--size SIZE` | `R2R_MCP_SIZE` | `16MiB` | `64KiB` to `1GiB` | memory |",
		"| `--addr ADDR` | `R2R_MCP_ADDR` | off (stdio) |  | listen here |",
		"| `--mode S` | `R2R_MCP_MODE` | `user` | `user` or `shared` | who acts |",
		"| `--url S` | `R2R_MCP_URL` | none |  | store |",
	} {
		if !strings.Contains(md, want+"\n") {
			t.Errorf("no row %s in\n%s", want, md)
		}
	}
}

// A tag that cannot be read is caught when the rows are built.
func TestBadTagsPanic(t *testing.T) {
	for name, cfg := range map[string]any{
		"default": &struct {
			D time.Duration `knob:"d" default:"soon" help:"h"`
		}{},
		"bound": &struct {
			D time.Duration `knob:"d" max:"later" help:"h"`
		}{},
		"no help": &struct {
			N int `knob:"n"`
		}{},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			Defaults(cfg)
			Rows(cfg)
		})
	}
}

func TestFormatBytes(t *testing.T) {
	for in, want := range map[int64]string{0: "0B", 512: "512B", 64 << 20: "64MiB", 3 << 29: "1.5GiB", 100_000_000: "95.37MiB"} {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

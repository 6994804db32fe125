package origin

import "testing"

func TestParse_KeepsSchemeAndHostOnly(t *testing.T) {
	for base, want := range map[string]string{
		"":                             "https://api.example.com",
		"http://127.0.0.1:8080":        "http://127.0.0.1:8080",
		"https://api.example.com/":     "https://api.example.com",
		"https://api.example.com/v3":   "",
		"ftp://api.example.com":        "",
		"https://api.example.com?a=b":  "",
		"https://api.example.com#x":    "",
		"https://user@api.example.com": "",
		"/relative":                    "",
	} {
		got, err := Parse(base, "https://api.example.com")
		if got != want || (err != nil) != (want == "") {
			t.Errorf("Parse(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
}

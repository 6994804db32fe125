package secret

import (
	"strings"
	"testing"
)

// The app secret is the app id and AppSecret alone: a copy of the WeChat Pay secret
// (with the merchant's keys), a missing field or anything but a JSON object is refused,
// and the error quotes no value.
func TestParseApp_TakesTheAppIDAndAppSecretAlone(t *testing.T) {
	got, err := ParseApp([]byte(`{"appid":"wx0000000000000001","appSecret":"s3cret-value"}`))
	if err != nil || got != (AppCredentials{AppID: "wx0000000000000001", AppSecret: "s3cret-value"}) {
		t.Fatalf("ParseApp = %+v, %v", got, err)
	}
	for name, value := range map[string]string{
		"the WeChat Pay secret": `{"mchid":"1230000109","appid":"wx1","apiV3Key":"k3y-value","appSecret":"s3cret-value"}`,
		"no appSecret":          `{"appid":"wx1"}`,
		"no appid":              `{"appSecret":"s3cret-value"}`,
		"empty appSecret":       `{"appid":"wx1","appSecret":""}`,
		"not JSON":              `s3cret-value`,
	} {
		_, err := ParseApp([]byte(value))
		if err == nil {
			t.Errorf("%s: taken", name)
		} else if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "k3y") {
			t.Errorf("%s: the error quotes a value: %v", name, err)
		}
	}
}

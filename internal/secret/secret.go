// Package secret reads the AWS Secrets Manager secrets the functions' mains configure
// WeChat's clients from: the WeChat Pay merchant secret (wechatpay.Secret), the app
// secret with the mini-program's app id and AppSecret alone (AppCredentials), the chat
// webhooks secret, and the waiting room's admission signing secret. Only the
// functions that read a secret link it (and the Secrets Manager client).
package secret

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/stockguard/stockguard/internal/admission"
	"github.com/stockguard/stockguard/internal/metric"
	"github.com/stockguard/stockguard/internal/wechatpay"
)

// Reader returns a function that reads the current SecretString of the secret arn on
// each call (for wechatpay.RotatingVerifier and RotatingClient, which call it at cold
// start and again when the merchant's keys rotate, and for alertChat's webhooks). The
// function's policy must allow secretsmanager:GetSecretValue on arn.
func Reader(awsCfg aws.Config, arn string) func(context.Context) ([]byte, error) {
	return stageReader(awsCfg, arn, "")
}

// stageReader is Reader of the version of arn that carries the staging label stage
// ("": AWSCURRENT, Secrets Manager's default).
func stageReader(awsCfg aws.Config, arn, stage string) func(context.Context) ([]byte, error) {
	client := secretsmanager.NewFromConfig(awsCfg)
	in := secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)}
	if stage != "" {
		in.VersionStage = aws.String(stage)
	}
	return func(ctx context.Context) ([]byte, error) {
		in := in
		out, err := client.GetSecretValue(ctx, &in)
		if err != nil {
			return nil, err
		}
		return []byte(aws.ToString(out.SecretString)), nil
	}
}

// AdmissionKeys reads the admission signing secret arn at its two versions, the
// staging labels AWSCURRENT and AWSPREVIOUS (Secrets Manager moves AWSPREVIOUS to
// the old version when a new value is put: "Secrets Manager concepts", secret
// versions), and returns the keys derived from them (admission.KeyFromSecret):
// tokens are signed with the current one and still accepted with the previous one.
// A secret with no previous version yet gives no previous key. Errors: the current
// version cannot be read or is too short.
func AdmissionKeys(ctx context.Context, awsCfg aws.Config, arn string) (*admission.Keys, error) {
	current, err := stageReader(awsCfg, arn, "AWSCURRENT")(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the admission secret: %w", err)
	}
	cur, err := admission.KeyFromSecret(current)
	if err != nil {
		return nil, err
	}
	var prev []byte
	var missing *types.ResourceNotFoundException
	switch old, err := stageReader(awsCfg, arn, "AWSPREVIOUS")(ctx); {
	case errors.As(err, &missing):
	case err != nil:
		return nil, fmt.Errorf("read the admission secret's previous version: %w", err)
	default:
		if prev, err = admission.KeyFromSecret(old); err != nil {
			return nil, err
		}
	}
	return admission.NewKeys(cur, prev)
}

// AppCredentials is the app secret's value (template parameter WechatAppSecretArn),
// the mini-program's app id and AppSecret and nothing else:
//
//	{"appid": "wxd678efh567hg6787", "appSecret": "<mini-program AppSecret>"}
//
// login (jscode2session), wechat and createOrder (the server API's stable_token) read
// it instead of the WeChat Pay secret, which holds the merchant's keys.
type AppCredentials struct {
	AppID     string `json:"appid"`
	AppSecret string `json:"appSecret"`
}

// ParseApp decodes an app secret's value. Errors (naming fields, never values): not a
// JSON object of appid and appSecret (any other field, such as a copy of the WeChat Pay
// secret's mchid or keys, is refused), or either empty.
func ParseApp(data []byte) (AppCredentials, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var a AppCredentials
	switch err := dec.Decode(&a); {
	case err != nil:
		return AppCredentials{}, errors.New("not a JSON object of appid and appSecret alone")
	case a.AppID == "":
		return AppCredentials{}, errors.New("appid is missing")
	case a.AppSecret == "":
		return AppCredentials{}, errors.New("appSecret is missing")
	}
	return a, nil
}

// App reads the app secret arn once and returns its value (ParseApp). Errors: the
// secret cannot be read or is malformed.
func App(ctx context.Context, awsCfg aws.Config, arn string) (AppCredentials, error) {
	data, err := Reader(awsCfg, arn)(ctx)
	if err != nil {
		return AppCredentials{}, fmt.Errorf("read the app secret: %w", err)
	}
	a, err := ParseApp(data)
	if err != nil {
		return AppCredentials{}, fmt.Errorf("parse the app secret: %w", err)
	}
	return a, nil
}

// reloads reports function's re-reads of the merchant secret
// (wechatpay.RotateOptions.OnReload): a SecretReloaded or SecretReloadFailed count
// with function (its short name) as the Function dimension, and a failure at error
// level (the old keys stay in use).
func reloads(log *slog.Logger, function string) wechatpay.RotateOptions {
	return wechatpay.RotateOptions{OnReload: metric.Outcomes(log, function, metric.SecretReloaded, metric.SecretReloadFailed, "merchant secret not re-read; the old keys stay in use")}
}

// Merchant returns the WeChat Pay merchant API client configured by the merchant
// secret arn (wechatpay.ClientConfigFromSecret), read again on an answer signed with an
// unknown Wechatpay-Serial or after a TTL (wechatpay.RotatingClient); each re-read is
// counted for function (its short name). Errors: the secret cannot be read or
// configures no client.
func Merchant(ctx context.Context, log *slog.Logger, awsCfg aws.Config, arn, function string) (*wechatpay.RotatingClient, error) {
	client, err := wechatpay.NewRotatingClient(ctx, Reader(awsCfg, arn), reloads(log, function))
	if err != nil {
		return nil, fmt.Errorf("configure the WeChat Pay merchant client from the secret: %w", err)
	}
	return client, nil
}

// Notifications returns the verifier of WeChat Pay notifications configured by the
// merchant secret arn, read again when a notification names an unknown
// Wechatpay-Serial or after a TTL (wechatpay.RotatingVerifier); each re-read is counted
// for function (its short name). Each read also gives token (when not nil) the secret's
// messageToken. Errors: the secret cannot be read or configures no verifier.
func Notifications(ctx context.Context, log *slog.Logger, awsCfg aws.Config, arn, function string, token *MessageToken) (*wechatpay.RotatingVerifier, error) {
	read := Reader(awsCfg, arn)
	if token != nil {
		read = token.noted(read)
	}
	verifier, err := wechatpay.NewRotatingVerifier(ctx, read, reloads(log, function))
	if err != nil {
		return nil, fmt.Errorf("configure WeChat Pay verification from the secret: %w", err)
	}
	return verifier, nil
}

// MessageToken is the merchant secret's messageToken (the Token of the mini-program's
// message push, "" when the secret has none) as last read: at cold start by the read
// Notifications makes anyway, then again at most every wechatpay.DefaultSecretTTL when
// Get is called, so a token changed in the secret applies without a redeploy, as the
// WeChat Pay keys do. Safe for concurrent use.
type MessageToken struct {
	read   func(context.Context) ([]byte, error)
	now    func() time.Time
	mu     sync.Mutex
	token  string
	readAt time.Time // last read attempt
}

// Get returns the token, reading the secret again first when the last read is older
// than wechatpay.DefaultSecretTTL; a failed read keeps the token read before.
func (m *MessageToken) Get(ctx context.Context) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.read != nil && m.now().Sub(m.readAt) >= wechatpay.DefaultSecretTTL {
		m.readAt = m.now()
		if data, err := m.read(ctx); err == nil {
			m.keep(data)
		}
	}
	return m.token
}

// keep takes the token from data, a read of the secret; m.mu is held or m is not
// shared yet.
func (m *MessageToken) keep(data []byte) {
	if s, err := wechatpay.ParseSecret(data); err == nil {
		m.token = s.MessageToken
	}
}

// noted wraps read so that each successful read also refreshes m.
func (m *MessageToken) noted(read func(context.Context) ([]byte, error)) func(context.Context) ([]byte, error) {
	m.read, m.now = read, time.Now
	return func(ctx context.Context) ([]byte, error) {
		data, err := read(ctx)
		if err == nil {
			m.mu.Lock()
			m.keep(data)
			m.readAt = m.now()
			m.mu.Unlock()
		}
		return data, err
	}
}

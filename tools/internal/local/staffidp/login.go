package staffidp

import (
	"crypto/subtle"
	"html/template"
	"net/http"
	"net/url"
)

// loginTemplate is the login page, in Chinese with English beside it, like the
// managed login page a user pool shows in the language it is set to.
var loginTemplate = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>员工登录 · Staff sign-in</title>
<style>
body{font-family:system-ui,"PingFang SC","Noto Sans CJK SC",sans-serif;background:#f2f3f5;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
form{background:#fff;padding:32px;border-radius:8px;width:min(340px,90vw);box-shadow:0 2px 12px rgba(0,0,0,.08)}
h1{font-size:20px;margin:0 0 4px}p{color:#86909c;margin:0 0 20px;font-size:13px}
label{display:block;font-size:14px;margin:12px 0 4px}input{width:100%;box-sizing:border-box;padding:8px;border:1px solid #c9cdd4;border-radius:4px;font-size:14px}
button{margin-top:20px;width:100%;padding:10px;background:#165dff;color:#fff;border:0;border-radius:4px;font-size:15px;cursor:pointer}
.error{color:#f53f3f;font-size:13px;margin-top:12px}
</style></head><body>
<form method="post" action="login">
<h1>stockguard 员工登录</h1><p>Staff sign-in · local stack (passwords are local-only)</p>
<input type="hidden" name="authRequestID" value="{{.ID}}">
<label for="username">用户名 Username</label><input id="username" name="username" autocomplete="username" value="{{.Username}}" required autofocus>
<label for="password">密码 Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
{{if .Error}}<div class="error" role="alert">{{.Error}}</div>{{end}}
<button type="submit">登录 Sign in</button>
</form></body></html>`))

// loginView is what the page shows.
type loginView struct{ ID, Username, Error string }

// loginPage serves GET /login?authRequestID=…, where the provider sends a browser
// that asked to sign in (op.Client.LoginURL).
func (s *storage) loginPage(w http.ResponseWriter, r *http.Request) {
	s.renderLogin(w, http.StatusOK, loginView{ID: r.URL.Query().Get("authRequestID")})
}

// login serves the form: a known username with its password marks the request signed
// in and sends the browser on to the provider's callback, which redirects to the
// console with the code; anything else shows the form again (401), nothing signed in.
func (s *storage) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id, username := r.PostForm.Get("authRequestID"), r.PostForm.Get("username")
	a, known := s.accounts[username]
	if !known || subtle.ConstantTimeCompare([]byte(a.Password), []byte(r.PostForm.Get("password"))) != 1 {
		s.renderLogin(w, http.StatusUnauthorized, loginView{ID: id, Username: username, Error: "用户名或密码不正确 · Wrong username or password"})
		return
	}
	if !s.signIn(id, username) {
		s.renderLogin(w, http.StatusBadRequest, loginView{Error: "登录请求已过期，请从控制台重新登录 · This sign-in expired; start again from the console"})
		return
	}
	http.Redirect(w, r, s.cfg.Issuer+"/authorize/callback?id="+url.QueryEscape(id), http.StatusFound)
}

func (s *storage) renderLogin(w http.ResponseWriter, status int, v loginView) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_ = loginTemplate.Execute(w, v)
}

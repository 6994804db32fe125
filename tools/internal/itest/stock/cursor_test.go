package stock_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A cursor that no page of this list gave (not base64, base64 of junk JSON, the
// old shape without its list, another list's, a key no table holds the like of) is
// 400 INVALID_REQUEST with a message that says what to do and no AWS text; DynamoDB
// is not asked.
func TestSKULists_RefuseCursorsNoPageGave(t *testing.T) {
	e := newEnv(t)
	e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"cup","name":"Cup","price":1000,"stock":10,"onSale":true}`)
	b64 := func(s string) string { return url.QueryEscape(base64.RawURLEncoding.EncodeToString([]byte(s))) }
	cursors := map[string]string{
		"random base64":        "q83vEjRWeJA",
		"junk JSON":            b64(`{"a":[1,2]}`),
		"a bare key":           b64(`{"pk":"cup"}`),
		"a huge key":           b64(`{"l":"skus","pk":"` + strings.Repeat("x", 3000) + `"}`),
		"a key with a NUL":     b64(`{"l":"skus","pk":"a\u0000"}`),
		"a buyer's order list": b64(`{"id":"01a2486b89397628b195860bd10b0d39","at":5,"u":"0011223344556677"}`),
	}
	for name, c := range cursors {
		for _, list := range []struct{ path, user, other string }{
			{"/admin/skus?after=", "", b64(`{"l":"skus on sale","pk":"cup"}`)},
			{"/skus?after=", "alice", b64(`{"l":"skus","pk":"cup"}`)},
		} {
			for _, cur := range []string{c, list.other} {
				code, out := e.stack.OutsideContract("a forged cursor").Call(t, http.MethodGet, list.path+cur, list.user, nil, "")
				msg, _ := out["message"].(string)
				if code != http.StatusBadRequest || out["code"] != "INVALID_REQUEST" || !strings.Contains(msg, "first page") || strings.Contains(strings.ToLower(msg), "dynamodb") {
					t.Errorf("%s%s (%s): %d %v, want 400 INVALID_REQUEST", list.path, cur, name, code, out)
				}
			}
		}
	}
	// A page's own cursor still works.
	if code, out := e.stack.Call(t, http.MethodGet, "/admin/skus?after="+b64(`{"l":"skus","pk":"cup"}`), "", nil, ""); code != http.StatusOK {
		t.Errorf("a well-formed cursor: %d %v", code, out)
	}
}

// One SKU item written wrong (its price a string) does not fail the lists: the
// others are listed, and the request's log line counts the one skipped and names its
// key.
func TestSKULists_SkipAnUnreadableSKUAndLogIt(t *testing.T) {
	e := newEnv(t)
	for _, id := range []string{"cup", "bowl"} {
		e.must(t, http.StatusCreated, "POST", "/admin/skus", `{"skuId":"`+id+`","name":"N","price":1000,"stock":10,"onSale":true}`)
	}
	if _, err := e.stack.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(e.stack.Tables.SKUs),
		Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "bowl"}},
		UpdateExpression:          aws.String("SET price = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "cheap"}},
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, user string }{{"/admin/skus", ""}, {"/skus", "alice"}} {
		code, out := e.stack.Call(t, http.MethodGet, c.path, c.user, nil, "")
		skus, _ := out["skus"].([]any)
		if code != http.StatusOK || len(skus) != 1 || skus[0].(map[string]any)["skuId"] != "cup" {
			t.Errorf("GET %s: %d %v, want 200 with cup only", c.path, code, out)
		}
	}
	if log := e.stack.Log.String(); strings.Count(log, `"unreadableSkus":1`) != 2 || !strings.Contains(log, `"unreadableKeys":"bowl"`) || strings.Contains(log, "cheap") {
		t.Errorf("the log does not count the unreadable SKU on both lists (or holds its value)")
	}
}

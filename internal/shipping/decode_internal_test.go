package shipping

import (
	"regexp"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// A refused shipment's message reaches the request's log line: it holds no phone
// number, masked or not (its example has no contact).
func TestDecodeShipment_MessagesHoldNoPhoneNumber(t *testing.T) {
	phoneLike := regexp.MustCompile(`(?:^|[^0-9A-Za-z.:])[0-9*]{7,}(?:$|[^0-9A-Za-z])`)
	for _, body := range []string{
		`[]`, `{"shipmentId":"p1"}`, `{"shipmentId":"p1","type":"express","carrier":"SF","tracking":"SF1","contact":"18912341234"}`,
		`{"shipmentId":"p1","type":"express","carrier":"SF","tracking":"SF1","contact":"189****1234","items":null}`,
	} {
		_, err := decodeShipment(events.APIGatewayV2HTTPRequest{Body: body})
		if err == nil || phoneLike.MatchString(err.Error()) {
			t.Errorf("%s: %v, want a message without a phone number", body, err)
		}
	}
}

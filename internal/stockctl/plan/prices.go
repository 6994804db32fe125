package plan

import "fmt"

// Prices are on-demand prices in US dollars, US East (N. Virginia), for what a sale
// uses. The defaults (DefaultPrices) and their sources:
//   - DynamoDB on-demand: $0.625 per million write request units and $0.125 per
//     million read request units ("Amazon DynamoDB pricing for on-demand capacity",
//     aws.amazon.com/dynamodb/pricing/on-demand/, Standard table class).
//   - Lambda: $0.20 per million requests and $0.0000133334 per GB-second on Arm
//     ("AWS Lambda pricing", aws.amazon.com/lambda/pricing/, first 7.5 billion
//     GB-seconds a month; template.yaml builds every function for arm64).
//   - API Gateway HTTP APIs: $1.00 per million requests ("Amazon API Gateway
//     pricing", aws.amazon.com/api-gateway/pricing/, first 300 million a month).
//   - SQS standard queues: $0.40 per million requests ("Amazon SQS pricing",
//     aws.amazon.com/sqs/pricing/, after the free tier; each 64 KB chunk of a
//     request is one request, and every message here is far smaller).
//   - AWS KMS requests to an RSA 2048 key: $3.00 per million, $0.03 per 10,000 ("AWS
//     Key Management Service pricing", aws.amazon.com/kms/pricing/, "Key usage":
//     requests involving RSA 2048 keys; asymmetric requests to other keys, ECC ones
//     included, are $0.15 per 10,000, five times as much, and requests that name an
//     asymmetric key are outside the free tier). A new login token is one kms:Sign.
//
// Free tiers are left out: a sale is priced as if they were used up.
type Prices struct {
	WriteRequestUnits float64 `json:"usdPerMillionWriteRequestUnits"`
	ReadRequestUnits  float64 `json:"usdPerMillionReadRequestUnits"`
	LambdaRequests    float64 `json:"usdPerMillionLambdaRequests"`
	LambdaGBSeconds   float64 `json:"usdPerLambdaGBSecond"`
	APIRequests       float64 `json:"usdPerMillionApiRequests"`
	SQSRequests       float64 `json:"usdPerMillionSqsRequests"`
	KMSRSARequests    float64 `json:"usdPerMillionKmsRsa2048Requests"`
}

// KMSKeyUSDPerMonth is what one AWS KMS key costs a month whether it is used or not
// ("AWS Key Management Service pricing", aws.amazon.com/kms/pricing/: "Each AWS KMS
// key that you create in AWS KMS costs $1/month", prorated hourly), and StackKMSKeys
// the keys a deployed stack keeps (template.yaml): the orders table's
// (OrdersTableKey, DynamoDB encryption at rest), the alerts topic's (AlertsKey) and the
// login signing key (SigningKeyA; SigningKeyB too during a rotation). Symmetric
// requests, such as DynamoDB's to the orders table's key, cost $0.03 per 10,000, and
// DynamoDB asks KMS for a caller's table key again only after 5 minutes without use
// (AWS KMS Developer Guide, "How Amazon DynamoDB uses AWS KMS"), so they are left out.
const (
	KMSKeyUSDPerMonth = 1.00
	StackKMSKeys      = 3
)

// DefaultPrices are the prices of the sources in Prices' doc.
var DefaultPrices = Prices{
	WriteRequestUnits: 0.625, ReadRequestUnits: 0.125,
	LambdaRequests: 0.20, LambdaGBSeconds: 0.0000133334,
	APIRequests: 1.00, SQSRequests: 0.40,
	KMSRSARequests: 3.00,
}

// Check returns an error naming the first negative price (as its tools/cmd/rehearse
// flag).
func (p Prices) Check() error {
	for _, f := range []struct {
		flag string
		v    float64
	}{
		{"usd-wru", p.WriteRequestUnits}, {"usd-rru", p.ReadRequestUnits},
		{"usd-lambda-requests", p.LambdaRequests}, {"usd-gb-second", p.LambdaGBSeconds},
		{"usd-api-requests", p.APIRequests}, {"usd-sqs-requests", p.SQSRequests},
		{"usd-kms-rsa-requests", p.KMSRSARequests},
	} {
		if f.v < 0 {
			return fmt.Errorf("-%s: must not be negative", f.flag)
		}
	}
	return nil
}

// Usage is what a sale used of each priced thing.
type Usage struct {
	WriteRequestUnits, ReadRequestUnits float64
	LambdaRequests                      float64
	LambdaGBSeconds                     float64
	APIRequests                         float64
	SQSRequests                         float64
	KMSRSARequests                      float64 // requests to an RSA 2048 key (kms:Sign)
}

// Cost is what u costs at p, in US dollars, by service.
type Cost struct {
	DynamoDB, Lambda, APIGateway, SQS, KMS float64
}

// Total is the sum of the services' costs.
func (c Cost) Total() float64 { return c.DynamoDB + c.Lambda + c.APIGateway + c.SQS + c.KMS }

// Cost prices u.
func (p Prices) Cost(u Usage) Cost {
	const million = 1e6
	return Cost{
		DynamoDB:   u.WriteRequestUnits/million*p.WriteRequestUnits + u.ReadRequestUnits/million*p.ReadRequestUnits,
		Lambda:     u.LambdaRequests/million*p.LambdaRequests + u.LambdaGBSeconds*p.LambdaGBSeconds,
		APIGateway: u.APIRequests / million * p.APIRequests,
		SQS:        u.SQSRequests / million * p.SQSRequests,
		KMS:        u.KMSRSARequests / million * p.KMSRSARequests,
	}
}

package plan

import "fmt"

// Prices are on-demand prices in US dollars, US East (N. Virginia) (us-east-1, the
// region the template and the local stack use), for everything a sale is billed for;
// the one table of prices the planner and the rehearsal (tools/cmd/rehearse, whose
// -usd-* flags override each) share. The defaults (DefaultPrices) and their pages, as
// of December 2026:
//   - DynamoDB on-demand: $0.625 per million write request units and $0.125 per
//     million read request units ("Amazon DynamoDB pricing for on-demand capacity",
//     aws.amazon.com/dynamodb/pricing/on-demand/, Standard table class).
//   - DynamoDB warm throughput raised before a sale (pre-warming, "Understanding
//     DynamoDB warm throughput": raising it is billed, once, for the units raised above
//     the table's current warm throughput): priced here as one hour of provisioned
//     capacity, $0.00065 per write unit and $0.00013 per read unit a second
//     ("Amazon DynamoDB pricing for provisioned capacity",
//     aws.amazon.com/dynamodb/pricing/provisioned/). An estimate on the high side:
//     check the on-demand page's warm-throughput line before trusting it.
//   - Lambda: $0.20 per million requests and $0.0000133334 per GB-second on Arm; a
//     function's provisioned concurrency $0.0000033334 per GB-second configured,
//     whether used or not, for at least 5 minutes ("AWS Lambda pricing",
//     aws.amazon.com/lambda/pricing/, first 7.5 billion GB-seconds a month; template.yaml
//     builds every function for arm64). Requests served by provisioned environments
//     are priced here at the on-demand duration price, above their own
//     ($0.0000077778 per GB-second on Arm).
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
//     Each customer managed key $1.00 a month, prorated hourly (same page, "Key
//     storage").
//   - CloudWatch Logs: $0.50 per GB ingested, standard log class; the functions' logs
//     are vended logs, $0.50 per GB for the first 10 TB a month ("Amazon CloudWatch
//     pricing", aws.amazon.com/cloudwatch/pricing/, "Logs").
//   - X-Ray: $5.00 per million traces recorded ("AWS X-Ray pricing",
//     aws.amazon.com/xray/pricing/, after the first 100,000 a month).
//
// Free tiers are left out: a sale is priced as if they were used up.
type Prices struct {
	WriteRequestUnits float64 `json:"usdPerMillionWriteRequestUnits"`
	ReadRequestUnits  float64 `json:"usdPerMillionReadRequestUnits"`
	// WarmWriteUnits and WarmReadUnits price raising a table's warm throughput by one
	// unit a second, once.
	WarmWriteUnits       float64 `json:"usdPerWarmWriteUnit"`
	WarmReadUnits        float64 `json:"usdPerWarmReadUnit"`
	LambdaRequests       float64 `json:"usdPerMillionLambdaRequests"`
	LambdaGBSeconds      float64 `json:"usdPerLambdaGBSecond"`
	ProvisionedGBSeconds float64 `json:"usdPerProvisionedGBSecond"`
	APIRequests          float64 `json:"usdPerMillionApiRequests"`
	SQSRequests          float64 `json:"usdPerMillionSqsRequests"`
	KMSRSARequests       float64 `json:"usdPerMillionKmsRsa2048Requests"`
	KMSKeyMonths         float64 `json:"usdPerKmsKeyMonth"`
	LogGB                float64 `json:"usdPerLogGBIngested"`
	XRayTraces           float64 `json:"usdPerMillionXRayTraces"`
}

// DefaultPrices are the prices of the sources in Prices' doc.
var DefaultPrices = Prices{
	WriteRequestUnits: 0.625, ReadRequestUnits: 0.125,
	WarmWriteUnits: 0.00065, WarmReadUnits: 0.00013,
	LambdaRequests: 0.20, LambdaGBSeconds: 0.0000133334, ProvisionedGBSeconds: 0.0000033334,
	APIRequests: 1.00, SQSRequests: 0.40,
	KMSRSARequests: 3.00, KMSKeyMonths: 1.00,
	LogGB: 0.50, XRayTraces: 5.00,
}

// Flags names each price's tools/cmd/rehearse flag, in the order of Prices, with a
// pointer to it in p.
func (p *Prices) Flags() []PriceFlag {
	return []PriceFlag{
		{"usd-wru", "USD per million DynamoDB write request units (on-demand)", &p.WriteRequestUnits},
		{"usd-rru", "USD per million DynamoDB read request units (on-demand)", &p.ReadRequestUnits},
		{"usd-warm-wcu", "USD per write unit a second a table's warm throughput is raised by (pre-warming, once)", &p.WarmWriteUnits},
		{"usd-warm-rcu", "USD per read unit a second a table's warm throughput is raised by (pre-warming, once)", &p.WarmReadUnits},
		{"usd-lambda-requests", "USD per million Lambda requests", &p.LambdaRequests},
		{"usd-gb-second", "USD per Lambda GB-second on Arm", &p.LambdaGBSeconds},
		{"usd-provisioned-gb-second", "USD per GB-second of Lambda provisioned concurrency on Arm, used or not", &p.ProvisionedGBSeconds},
		{"usd-api-requests", "USD per million HTTP API requests", &p.APIRequests},
		{"usd-sqs-requests", "USD per million SQS requests", &p.SQSRequests},
		{"usd-kms-rsa-requests", "USD per million AWS KMS requests to an RSA 2048 key", &p.KMSRSARequests},
		{"usd-kms-key-month", "USD per AWS KMS customer managed key a month", &p.KMSKeyMonths},
		{"usd-log-gb", "USD per GB of CloudWatch Logs ingested", &p.LogGB},
		{"usd-xray-traces", "USD per million X-Ray traces recorded", &p.XRayTraces},
	}
}

// PriceFlag is one price as a command-line flag: its name (without the dash), what
// it prices, and the price.
type PriceFlag struct {
	Name, Usage string
	Value       *float64
}

// Check returns an error naming the first negative price (as its tools/cmd/rehearse
// flag).
func (p Prices) Check() error {
	for _, f := range p.Flags() {
		if *f.Value < 0 {
			return fmt.Errorf("-%s: must not be negative", f.Name)
		}
	}
	return nil
}

// Usage is what a sale used of each priced thing.
type Usage struct {
	WriteRequestUnits float64 `json:"writeRequestUnits"`
	ReadRequestUnits  float64 `json:"readRequestUnits"`
	// WarmWriteUnits and WarmReadUnits are the units a second the tables' warm
	// throughput was raised by, summed over the tables pre-warmed.
	WarmWriteUnits  float64 `json:"warmWriteUnits"`
	WarmReadUnits   float64 `json:"warmReadUnits"`
	LambdaRequests  float64 `json:"lambdaRequests"`
	LambdaGBSeconds float64 `json:"lambdaGBSeconds"`
	// ProvisionedGBSeconds are the GB-seconds of provisioned concurrency configured
	// (environments × memory × seconds, at least 5 minutes).
	ProvisionedGBSeconds float64 `json:"provisionedGBSeconds"`
	APIRequests          float64 `json:"apiRequests"`
	SQSRequests          float64 `json:"sqsRequests"`
	KMSRSARequests       float64 `json:"kmsRsa2048Requests"` // requests to an RSA 2048 key (kms:Sign)
	LogBytes             float64 `json:"logBytes"`           // CloudWatch Logs ingested: the functions' and API Gateway's
	XRayTraces           float64 `json:"xRayTraces"`
}

// Cost is what a usage costs at some prices, in US dollars, line by line, and in
// Total: the on-demand lines (DynamoDB's request units, Lambda's requests and
// GB-seconds, API Gateway, SQS, KMS signing, CloudWatch Logs, X-Ray) and the fixed
// ones of a sale (provisioned concurrency, pre-warming).
type Cost struct {
	DynamoDB               float64 `json:"dynamoDB"`
	LambdaRequests         float64 `json:"lambdaRequests"`
	LambdaGBSeconds        float64 `json:"lambdaGBSeconds"`
	APIGateway             float64 `json:"apiGateway"`
	SQS                    float64 `json:"sqs"`
	KMS                    float64 `json:"kms"`
	Logs                   float64 `json:"cloudWatchLogs"`
	XRay                   float64 `json:"xRay"`
	ProvisionedConcurrency float64 `json:"provisionedConcurrency"`
	PreWarming             float64 `json:"preWarming"`
	Total                  float64 `json:"total"`
}

// Lambda is what Lambda's requests and GB-seconds cost (not its provisioned
// concurrency).
func (c Cost) Lambda() float64 { return c.LambdaRequests + c.LambdaGBSeconds }

// Fixed is c's fixed lines alone (provisioned concurrency, pre-warming), with their
// Total.
func (c Cost) Fixed() Cost {
	return Cost{ProvisionedConcurrency: c.ProvisionedConcurrency, PreWarming: c.PreWarming}.withTotal()
}

// Scale is c with every line and the total times f.
func (c Cost) Scale(f float64) Cost {
	return Cost{
		DynamoDB: c.DynamoDB * f, LambdaRequests: c.LambdaRequests * f, LambdaGBSeconds: c.LambdaGBSeconds * f,
		APIGateway: c.APIGateway * f, SQS: c.SQS * f, KMS: c.KMS * f, Logs: c.Logs * f, XRay: c.XRay * f,
		ProvisionedConcurrency: c.ProvisionedConcurrency * f, PreWarming: c.PreWarming * f,
	}.withTotal()
}

// withTotal is c with Total the sum of its lines.
func (c Cost) withTotal() Cost {
	c.Total = c.DynamoDB + c.LambdaRequests + c.LambdaGBSeconds + c.APIGateway + c.SQS + c.KMS + c.Logs + c.XRay +
		c.ProvisionedConcurrency + c.PreWarming
	return c
}

// Cost prices u.
func (p Prices) Cost(u Usage) Cost {
	const million = 1e6
	return Cost{
		DynamoDB:               u.WriteRequestUnits/million*p.WriteRequestUnits + u.ReadRequestUnits/million*p.ReadRequestUnits,
		LambdaRequests:         u.LambdaRequests / million * p.LambdaRequests,
		LambdaGBSeconds:        u.LambdaGBSeconds * p.LambdaGBSeconds,
		APIGateway:             u.APIRequests / million * p.APIRequests,
		SQS:                    u.SQSRequests / million * p.SQSRequests,
		KMS:                    u.KMSRSARequests / million * p.KMSRSARequests,
		Logs:                   u.LogBytes / (1 << 30) * p.LogGB,
		XRay:                   u.XRayTraces / million * p.XRayTraces,
		ProvisionedConcurrency: u.ProvisionedGBSeconds * p.ProvisionedGBSeconds,
		PreWarming:             u.WarmWriteUnits*p.WarmWriteUnits + u.WarmReadUnits*p.WarmReadUnits,
	}.withTotal()
}

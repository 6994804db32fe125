package metric

// Name is one stockguard metric: its CloudWatch metric name and unit. Every Name is
// declared in this file and nowhere else (its fields are unexported), so this file is
// the registry of what the code can emit: template.yaml's alarms and dashboard name
// metrics from it, and a template test checks that each alarm's metric is declared
// here and used by the function its Function dimension names.
type Name struct{ name, unit string }

// String returns the CloudWatch metric name, e.g. "Released".
func (n Name) String() string { return n.name }

// Unit returns the CloudWatch unit, Count or Milliseconds.
func (n Name) Unit() string { return n.unit }

// Of is n's data for one line: each of values becomes a sample of the metric.
func (n Name) Of(values ...float64) Value { return Value{Metric: n, Values: values} }

// closeOrder (queue, sweep, cancel).
var (
	// Released counts orders released by a batch or sweep (their stock made available again).
	Released = Name{"Released", Count}
	// ReleaseFailed counts orders a batch or sweep could not handle (store or queue failure).
	ReleaseFailed = Name{"ReleaseFailed", Count}
	// ReleaseLag is, per released order, the time from its expiresAt to its release, in
	// milliseconds (reconcile's releases of overdue orders are counted too).
	ReleaseLag = Name{"ReleaseLag", Milliseconds}
	// SweepDue counts the PENDING orders past expiry a sweep found.
	SweepDue = Name{"SweepDue", Count}
	// ReleasedUnsettled counts releases made without asking WeChat Pay first (it failed).
	ReleasedUnsettled = Name{"ReleasedUnsettled", Count}
	// PaidByQuery counts orders found paid by asking WeChat Pay before a release.
	PaidByQuery = Name{"PaidByQuery", Count}
	// RefundedOutside counts orders a query before release found paid and then refunded
	// outside stockguard (trade_state REFUND): recorded as paid, the refund for the
	// merchant to settle.
	RefundedOutside = Name{"RefundedOutside", Count}
)

// createOrder.
var (
	// CloseScheduleFailed counts new orders whose close message could not be sent (the
	// sweep releases them, up to a sweep period late).
	CloseScheduleFailed = Name{"CloseScheduleFailed", Count}
	// Busy is 1 for an order request answered 503 BUSY, 0 for one the store decided
	// otherwise; its Average is the BUSY rate of order requests.
	Busy = Name{"Busy", Count}
	// RiskUnknown counts scalper checks WeChat gave no rank for (an errcode, a
	// timeout): the buyer was let through (docs/design.md, "The scalper check").
	RiskUnknown = Name{"RiskUnknown", Count}
	// RiskRejected counts requests the scalper check refused: orders, ticket takes
	// and waitlist joins (a take or join of a buyer who holds a ticket or entry from
	// before is counted, then answered with it).
	RiskRejected = Name{"RiskRejected", Count}
)

// payCallback.
var (
	// Paid, PaidLate, RefundDue and PaidTwice are 1 or 0 per notification: the payment's
	// outcome (inventory.PayResult).
	Paid      = Name{"Paid", Count}
	PaidLate  = Name{"PaidLate", Count}
	RefundDue = Name{"RefundDue", Count}
	PaidTwice = Name{"PaidTwice", Count}
	// NotificationRejected is 1 per notification answered 4xx (including 401), else 0.
	NotificationRejected = Name{"NotificationRejected", Count}
	// NotificationUnverified is 1 per notification answered 401 (signature, timestamp,
	// serial or AES-GCM tag did not verify), else 0.
	NotificationUnverified = Name{"NotificationUnverified", Count}
	// NotificationFailed is 1 per notification answered 5xx (WeChat Pay resends), else 0.
	NotificationFailed = Name{"NotificationFailed", Count}
)

// Functions holding the WeChat Pay merchant secret (payCallback, closeOrder).
var (
	// SecretReloaded counts successful re-reads of the merchant secret (after an unknown
	// Wechatpay-Serial or when its TTL passed).
	SecretReloaded = Name{"SecretReloaded", Count}
	// SecretReloadFailed counts re-reads that failed (the old configuration stays in use).
	SecretReloadFailed = Name{"SecretReloadFailed", Count}
)

// reconcile.
var (
	// SKUsChecked, Differences, OverduePending, Repairs and ItemsRead are per run: SKUs
	// checked, differences found, PENDING orders past expiry plus grace, repairs made,
	// DynamoDB items read.
	SKUsChecked    = Name{"SKUsChecked", Count}
	Differences    = Name{"Differences", Count}
	OverduePending = Name{"OverduePending", Count}
	Repairs        = Name{"Repairs", Count}
	ItemsRead      = Name{"ItemsRead", Count}
	// Duration is a run's duration in milliseconds.
	Duration = Name{"Duration", Milliseconds}
	// Difference is, per SKU (dimension SkuId), the largest difference in units.
	Difference = Name{"Difference", Count}
	// AlertNotPublished counts alerts that could not be published to the alerts topic;
	// the run that failed to publish also fails.
	AlertNotPublished = Name{"AlertNotPublished", Count}

	// RefundProblems (reconcile) counts orders whose refund breaks the money rules
	// (refunded above paid, RETURN entries missing or unexpected); RefundsOverdue
	// counts refunds REFUNDING past the bound at reconcile time.
	RefundProblems = Name{"RefundProblems", Count}
	RefundsOverdue = Name{"RefundsOverdue", Count}
)

// The refund function's and the refund-notify route's metrics.
var (
	// RefundRequested counts refund requests WeChat Pay accepted in a batch;
	// RefundRequestFailed those left for SQS to retry; RefundedAtOnce those WeChat
	// Pay answered SUCCESS at once.
	RefundRequested     = Name{"RefundRequested", Count}
	RefundRequestFailed = Name{"RefundRequestFailed", Count}
	RefundedAtOnce      = Name{"RefundedAtOnce", Count}
	// RefundAbnormal counts refunds WeChat Pay closed or marked abnormal: the money
	// must be returned by hand.
	RefundAbnormal = Name{"RefundAbnormal", Count}
	// RefundingStuck is the number of refunds still REFUNDING past the bound after
	// the refund function's scheduled pass.
	RefundingStuck = Name{"RefundingStuck", Count}
)

// alertChat (posts the alerts topic's notifications to the team's chat).
var (
	// ChatPosted counts alerts posted to a chat webhook, one per alert and webhook;
	// ChatPostFailed those that could not be posted after the retries (the invocation
	// then fails, so Lambda tries it again); ChatQuiet those held back because the same
	// alert went to that webhook within the quiet period; ChatHeld those held for a
	// digest because the webhook's bot was at its rate (a digest posted counts once in
	// ChatPosted, or in ChatPostFailed).
	ChatPosted     = Name{"ChatPosted", Count}
	ChatPostFailed = Name{"ChatPostFailed", Count}
	ChatQuiet      = Name{"ChatQuiet", Count}
	ChatHeld       = Name{"ChatHeld", Count}
)

// The wechat function's metrics (shipping uploads and subscribe messages).
var (
	// ShippingUploaded counts uploads WeChat accepted; ShippingUploadFailed uploads
	// that failed (retried with backoff, or refused for good: the order's shipping is
	// FAILED). The ShippingUploadFailedAlarm watches the failures.
	ShippingUploaded     = Name{"ShippingUploaded", Count}
	ShippingUploadFailed = Name{"ShippingUploadFailed", Count}
	// NoticeSent counts subscribe messages WeChat accepted; NoticeFailed sends that
	// failed (WeChat refused or could not be reached; a buyer without a subscription
	// left is not counted). The NoticeFailedAlarm watches the failures.
	NoticeSent   = Name{"NoticeSent", Count}
	NoticeFailed = Name{"NoticeFailed", Count}
)

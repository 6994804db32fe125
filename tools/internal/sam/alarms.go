package sam

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/awslabs/goformation/v7/cloudformation/cloudwatch"
)

// Alarm is one AWS::CloudWatch::Alarm: its logical id, what it watches and where it
// sends its notifications.
type Alarm struct {
	// Name is the logical id.
	Name string
	// Metrics are the metrics it reads: one for a single-metric alarm, each MetricStat
	// of a metric math alarm (expressions themselves name no metric).
	Metrics []MetricRef
	// Actions are its AlarmActions (resolved: topic ARNs).
	Actions []string
	// Description is its AlarmDescription, which CloudWatch puts in every notification.
	Description string
}

// MetricRef names one CloudWatch metric: namespace, name and dimensions.
type MetricRef struct {
	Namespace  string
	Name       string
	Dimensions map[string]string
}

// String is namespace/name{dimension=value,...}, for messages.
func (m MetricRef) String() string {
	s := m.Namespace + "/" + m.Name
	for _, k := range slices.Sorted(maps.Keys(m.Dimensions)) {
		s += fmt.Sprintf(" %s=%s", k, m.Dimensions[k])
	}
	return s
}

// Alarms returns every AWS::CloudWatch::Alarm of the template, sorted by Name. It
// returns an error naming an alarm that reads no metric.
func (t *Template) Alarms() ([]Alarm, error) {
	return inIDOrder("alarm", t.cf.GetAllCloudWatchAlarmResources(), func(id string, a *cloudwatch.Alarm) (Alarm, error) {
		alarm := Alarm{Name: id, Actions: a.AlarmActions, Description: aws.ToString(a.AlarmDescription)}
		if a.MetricName != nil {
			alarm.Metrics = append(alarm.Metrics, metricRef(aws.ToString(a.Namespace), *a.MetricName, a.Dimensions))
		}
		for _, q := range a.Metrics {
			if q.MetricStat == nil {
				continue
			}
			m := q.MetricStat.Metric
			dims := make([]cloudwatch.Alarm_Dimension, 0, len(m.Dimensions))
			for _, d := range m.Dimensions {
				dims = append(dims, cloudwatch.Alarm_Dimension{Name: d.Name, Value: d.Value})
			}
			alarm.Metrics = append(alarm.Metrics, metricRef(aws.ToString(m.Namespace), aws.ToString(m.MetricName), dims))
		}
		if len(alarm.Metrics) == 0 {
			return Alarm{}, errors.New("reads no metric")
		}
		return alarm, nil
	})
}

func metricRef(namespace, name string, dims []cloudwatch.Alarm_Dimension) MetricRef {
	m := MetricRef{Namespace: namespace, Name: name, Dimensions: map[string]string{}}
	for _, d := range dims {
		m.Dimensions[d.Name] = d.Value
	}
	return m
}

// LogMetric is a metric an AWS::Logs::MetricFilter makes from a log group's lines.
type LogMetric struct {
	// Filter is the filter's logical id; LogGroup the (resolved) log group name.
	Filter, LogGroup string
	// Metric is the metric's namespace and name; its dimension names are the keys of
	// Dimensions (their values come from each log line).
	Metric MetricRef
}

// LogMetrics returns the metrics of every AWS::Logs::MetricFilter, sorted by filter.
func (t *Template) LogMetrics() []LogMetric {
	filters := t.cf.GetAllLogsMetricFilterResources()
	var out []LogMetric
	for _, id := range slices.Sorted(maps.Keys(filters)) {
		for _, tr := range filters[id].MetricTransformations {
			m := MetricRef{Namespace: tr.MetricNamespace, Name: tr.MetricName, Dimensions: map[string]string{}}
			for _, d := range tr.Dimensions {
				m.Dimensions[d.Key] = d.Value
			}
			out = append(out, LogMetric{Filter: id, LogGroup: filters[id].LogGroupName, Metric: m})
		}
	}
	return out
}

// Dashboards returns the DashboardBody (JSON text) of every AWS::CloudWatch::Dashboard,
// by logical id.
func (t *Template) Dashboards() map[string]string {
	out := map[string]string{}
	for id, d := range t.cf.GetAllCloudWatchDashboardResources() {
		out[id] = d.DashboardBody
	}
	return out
}

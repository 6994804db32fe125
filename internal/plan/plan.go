// Package plan sizes a sale: from the peak orders and page views per second a
// merchant expects, what each limit on the path must carry and what to ask AWS for.
package plan

// A load generator for exampleService.Hello on grpc-go, built from Debian's packages in GOPATH mode like the grpc-go
// implementation: a client that costs far less per call than the servers it measures, so that a benchmark measures
// them and not itself. It keeps -concurrency calls in flight over -connections connections (one ClientConn each)
// for -duration after a -warmup, and prints one JSON object: requests/s, latency percentiles, errors by status.
// Latencies go into a log-linear histogram of bounded size (about 1% resolution), one per caller, merged at the end.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pb "example.local/server/example"
)

// subBits sub-buckets per power of two: values below 2^subBits microseconds are exact, larger ones within 1/128.
const subBits = 7
const subCount = 1 << subBits

// Microseconds up to 2^40 (about 12 days): far past any call's deadline.
const maxExponent = 40

type histogram struct {
	counts [(maxExponent - subBits + 2) * subCount]uint64
	total  uint64
	max    int64
}

func bucketOf(us int64) int {
	if us < subCount {
		return int(us)
	}
	// The top subBits+1 bits of the value: its power of two and the sub-bucket within it.
	shift := 63 - bits.LeadingZeros64(uint64(us)) - subBits
	return (shift+1)*subCount + int(us>>uint(shift)) - subCount
}

// The largest value a bucket holds, in microseconds: a percentile is reported as no less than it was.
func upperOf(bucket int) int64 {
	if bucket < subCount {
		return int64(bucket)
	}
	shift := bucket/subCount - 1
	mantissa := int64(bucket%subCount + subCount)
	return ((mantissa + 1) << uint(shift)) - 1
}

func (h *histogram) record(us int64) {
	if us < 0 {
		us = 0
	}
	b := bucketOf(us)
	if b >= len(h.counts) {
		b = len(h.counts) - 1
	}
	h.counts[b]++
	h.total++
	if us > h.max {
		h.max = us
	}
}

func (h *histogram) add(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	if o.max > h.max {
		h.max = o.max
	}
}

func (h *histogram) percentile(p float64) int64 {
	if h.total == 0 {
		return 0
	}
	rank := uint64(p / 100 * float64(h.total))
	if rank >= h.total {
		rank = h.total - 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen > rank {
			v := upperOf(i)
			if v > h.max {
				v = h.max
			}
			return v
		}
	}
	return h.max
}

type caller struct {
	hist     histogram
	requests uint64
	errors   map[string]uint64
}

type latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

type report struct {
	Target            string            `json:"target"`
	Concurrency       int               `json:"concurrency"`
	Connections       int               `json:"connections"`
	DurationMs        int64             `json:"durationMs"`
	Requests          uint64            `json:"requests"`
	RequestsPerSecond int64             `json:"requestsPerSecond"`
	LatencyMs         latency           `json:"latencyMs"`
	Errors            map[string]uint64 `json:"errors"`
	GoMaxProcs        int               `json:"gomaxprocs"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "go-load: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	target := flag.String("target", "", "host:port of the server (loopback)")
	concurrency := flag.Int("concurrency", 64, "calls in flight at once")
	connections := flag.Int("connections", 4, "connections the calls are spread over, one ClientConn each")
	duration := flag.Duration("duration", 5*time.Second, "how long calls keep starting after the warm-up")
	warmup := flag.Duration("warmup", time.Second, "calls made and not counted before the measured run")
	body := flag.String("body", "load", "the request's body")
	timeout := flag.Duration("timeout", 5*time.Second, "bound on one call")
	flag.Parse()
	if *target == "" {
		fail("-target host:port is required")
	}
	if *concurrency < 1 || *connections < 1 || *connections > *concurrency {
		fail("-concurrency must be at least 1 and -connections from 1 to -concurrency")
	}
	if *duration <= 0 || *duration > 10*time.Minute || *warmup < 0 || *warmup > time.Minute {
		fail("-duration must be from 1ns to 10m and -warmup from 0 to 1m")
	}

	conns := make([]*grpc.ClientConn, *connections)
	clients := make([]pb.ExampleServiceClient, *connections)
	for i := range conns {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := grpc.DialContext(ctx, *target, grpc.WithInsecure(), grpc.WithBlock())
		cancel()
		if err != nil {
			fail("connecting to %s: %v", *target, err)
		}
		conns[i] = conn
		clients[i] = pb.NewExampleServiceClient(conn)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	request := &pb.Message{Body: *body}
	// 0: warming up, 1: measuring, 2: over.
	var phase int32
	var measureStart, measureEnd time.Time
	callers := make([]*caller, *concurrency)
	var wg sync.WaitGroup
	for w := 0; w < *concurrency; w++ {
		c := &caller{errors: map[string]uint64{}}
		callers[w] = c
		client := clients[w%len(clients)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				p := atomic.LoadInt32(&phase)
				if p == 2 {
					return
				}
				ctx, cancel := context.WithTimeout(context.Background(), *timeout)
				start := time.Now()
				_, err := client.Hello(ctx, request)
				elapsed := time.Since(start)
				cancel()
				// A call counts only if it started and ended in the measured phase.
				if p != 1 || atomic.LoadInt32(&phase) != 1 {
					continue
				}
				c.requests++
				c.hist.record(elapsed.Microseconds())
				if err != nil {
					c.errors[status.Code(err).String()]++
				}
			}
		}()
	}
	time.Sleep(*warmup)
	measureStart = time.Now()
	atomic.StoreInt32(&phase, 1)
	time.Sleep(*duration)
	atomic.StoreInt32(&phase, 2)
	measureEnd = time.Now()
	wg.Wait()

	var all histogram
	errors := map[string]uint64{}
	var requests uint64
	var sum float64
	for _, c := range callers {
		all.add(&c.hist)
		requests += c.requests
		for k, v := range c.errors {
			errors[k] += v
		}
	}
	for i, n := range all.counts {
		sum += float64(n) * float64(upperOf(i))
	}
	elapsed := measureEnd.Sub(measureStart)
	ms := func(us int64) float64 { return float64(us) / 1000 }
	mean := 0.0
	if all.total > 0 {
		mean = sum / float64(all.total) / 1000
	}
	out := report{
		Target:            *target,
		Concurrency:       *concurrency,
		Connections:       *connections,
		DurationMs:        elapsed.Milliseconds(),
		Requests:          requests,
		RequestsPerSecond: int64(float64(requests) / elapsed.Seconds()),
		LatencyMs:         latency{P50: ms(all.percentile(50)), P90: ms(all.percentile(90)), P99: ms(all.percentile(99)), Max: ms(all.max), Mean: float64(int64(mean*1000)) / 1000},
		Errors:            errors,
		GoMaxProcs:        runtime.GOMAXPROCS(0),
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fail("%v", err)
	}
}

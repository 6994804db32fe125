# Build targets for `sam build`. Every function in template.yaml has
# `Metadata: BuildMethod: makefile` and `CodeUri: .`, so SAM runs
# `make build-<LogicalId>` here, at the module root, with ARTIFACTS_DIR set to that
# function's artifact directory. samconfig.toml builds in source, so make runs in this
# directory itself rather than in a per-function copy of the repository (inside
# `sam build --use-container --no-build-in-source`, SAM copies it first). The
# provided.al2023 runtime runs the executable named bootstrap
# (AWS SAM developer guide, "Building custom runtimes"; Lambda developer guide,
# "Deploy Go Lambda functions with .zip file archives").

GO ?= go
# GOARCH must match the functions' Architectures in template.yaml (arm64 -> arm64,
# x86_64 -> amd64); tools/internal/sam's wiring test fails when they disagree. Only the
# make command line overrides it (an exported GOARCH in the environment does not): the
# bootstrap smoke test builds `make build-<LogicalId> GOARCH=amd64` to run the same
# build under the Lambda Runtime Interface Emulator on an x86_64 machine.
GOARCH = arm64
# GOWORK=off builds a function from the service module alone, with the versions its
# go.mod lists: go.work (and the tools module it adds) never changes what a function
# links.
LAMBDA_GOENV = GOWORK=off GOOS=linux GOARCH=$(GOARCH) CGO_ENABLED=0
# lambda.norpc leaves out aws-lambda-go's RPC mode (only the go1.x runtime used it);
# nethttpomithttp2 leaves net/http's bundled HTTP/2 out (net/http/omithttp2.go), about
# 0.4 MB of every bootstrap: the functions call DynamoDB, SQS, SNS, KMS, Secrets
# Manager, the X-Ray daemon and WeChat's APIs over HTTP/1.1, and serve no HTTP. It keeps
# the admin bootstrap, the largest, under the 10 MiB the deploy test allows with the
# SDK calls traced (README, "Logs and traces").
LAMBDA_GOFLAGS := -tags lambda.norpc,nethttpomithttp2 -trimpath -ldflags='-s -w'

# lambda_function(LogicalId,dir) defines build-<LogicalId>, which compiles
# ./functions/<dir> into $(ARTIFACTS_DIR)/bootstrap.
define lambda_function
.PHONY: build-$(1)
build-$(1):
	$$(if $$(ARTIFACTS_DIR),,$$(error ARTIFACTS_DIR is not set: run this target through sam build))
	$$(LAMBDA_GOENV) $$(GO) build $$(LAMBDA_GOFLAGS) -o $$(ARTIFACTS_DIR)/bootstrap ./functions/$(2)
endef

# One line per AWS::Serverless::Function of template.yaml.
$(eval $(call lambda_function,CreateOrderFunction,createOrder))
$(eval $(call lambda_function,CloseOrderFunction,closeOrder))
$(eval $(call lambda_function,PayCallbackFunction,payCallback))
$(eval $(call lambda_function,ReconcileFunction,reconcile))
$(eval $(call lambda_function,AdmitterFunction,admitter))
$(eval $(call lambda_function,LoginFunction,login))
$(eval $(call lambda_function,JwksFunction,jwks))
$(eval $(call lambda_function,AdminFunction,admin))
$(eval $(call lambda_function,RefundFunction,refund))
$(eval $(call lambda_function,AlertChatFunction,alertChat))
$(eval $(call lambda_function,WeChatFunction,wechat))

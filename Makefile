# `make demo` and `make test` each build their own virtual environment; nothing else is needed.
PYTHON ?= python3
DEMO_VENV := .venv-demo
TEST_VENV := .venv-test
CHECKOV_VENV := .venv-checkov
PCLUSTER_VENV := .venv-pcluster
E2E_VENV := .venv-e2e
PIP := --quiet --disable-pip-version-check
OUT := demo-out

.PHONY: demo test e2e goldens docs clean assess-screenshot terraform-fmt

$(DEMO_VENV)/.done: pyproject.toml
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/pip install $(PIP) -e . "torch==2.13.0" numpy
	$(DEMO_VENV)/bin/pip install $(PIP) --no-deps "accelerate==1.15.0" "transformers==5.23.0"
	touch $@

$(TEST_VENV)/.done: pyproject.toml
	$(PYTHON) -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/pip install $(PIP) -e ".[test]"
	touch $@

# checkov pins an old boto3, so it lives in its own environment (used by tests/test_generate.py).
$(CHECKOV_VENV)/.done:
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install $(PIP) "checkov==3.3.30"
	touch $@

# ParallelCluster configs are checked by ParallelCluster's own schema and validators under moto
# (tests/test_deploy_parallelcluster.py runs tests/pcluster_validate.py with this python); the
# package pins its own boto3, aws-cdk and marshmallow, so it lives apart from the test venv.
$(PCLUSTER_VENV)/.done:
	$(PYTHON) -m venv $(PCLUSTER_VENV)
	$(PCLUSTER_VENV)/bin/pip install $(PIP) "aws-parallelcluster==3.16.1" "moto==5.2.5"
	touch $@

# Karpenter objects are checked with @kubernetes-models/karpenter (validators generated from the CRDs).
tests/k8s/node_modules/.done: tests/k8s/package.json
	cd tests/k8s && npm install --no-audit --no-fund --silent
	touch $@

# Terraform outputs are checked against the AWS provider's schema carried by @cdktf/provider-aws
# (its generated per-resource code; tests/terraform_schema.py reads it). Only package.json and lib/
# are unpacked: the 130 MB .jsii type file is not needed.
TF_SCHEMA := tests/terraform/provider-aws
TF_SCHEMA_PKG := @cdktf/provider-aws@21.22.1
$(TF_SCHEMA)/.done:
	rm -rf $(TF_SCHEMA) && mkdir -p $(TF_SCHEMA)
	cd $(TF_SCHEMA) && npm pack --silent $(TF_SCHEMA_PKG) >/dev/null \
		&& tar xzf cdktf-provider-aws-*.tgz --wildcards 'package/package.json' 'package/lib/*.js' 'package/lib/*.d.ts' \
		&& rm cdktf-provider-aws-*.tgz
	touch $@

# `terraform fmt -check` on every rendered Terraform file. No registry package carries a current
# terraform binary (PyPI's terraform-binary ships 0.11; npm's `terraform` is another project), so
# this runs where a terraform binary is installed and is not part of `make test`.
terraform-fmt: $(TEST_VENV)/.done
	@command -v terraform >/dev/null || { echo "terraform-fmt: no terraform binary on PATH"; exit 1; }
	NRN_TERRAFORM=$$(command -v terraform) $(TEST_VENV)/bin/python -m pytest -q tests/test_deploy_ec2.py -k terraform_fmt

demo: $(DEMO_VENV)/.done
	@rm -rf $(OUT) && mkdir -p $(OUT)
	@echo "== 1. scan samples/ (target: portable)"
	$(DEMO_VENV)/bin/neuron-migrator scan samples --fail-on never --statistics
	@echo "== 2. fix samples/train_amp.py (diff only; nothing is written)"
	@# exit 1 means "files would change" (the point of this step); 2 would be a tool error
	$(DEMO_VENV)/bin/neuron-migrator fix samples/train_amp.py; rc=$$?; [ $$rc -le 1 ]
	@echo "== 3. scan installed packages: torch itself (PyTorch's own source is one NRN002 finding), then transformers (real third-party code; full report in $(OUT)/transformers-scan.txt)"
	$(DEMO_VENV)/bin/neuron-migrator scan "$$($(DEMO_VENV)/bin/python -c 'import os, importlib.util as u; print(os.path.dirname(u.find_spec("torch").origin))')" --fail-on never
	$(DEMO_VENV)/bin/neuron-migrator scan "$$($(DEMO_VENV)/bin/python -c 'import os, importlib.util as u; print(os.path.dirname(u.find_spec("transformers").origin))')" \
		--fail-on never --statistics > $(OUT)/transformers-scan.txt
	@sed -n '/^Found /,$$p' $(OUT)/transformers-scan.txt
	@echo "== 4. generate a trn2.48xlarge launch template (boto3 JSON and CloudFormation)"
	$(DEMO_VENV)/bin/neuron-migrator generate launch-template --instance-type trn2.48xlarge --region us-east-2 --name demo --output $(OUT)/trn2-json
	$(DEMO_VENV)/bin/neuron-migrator generate launch-template --instance-type trn2.48xlarge --region us-east-2 --name demo --format cloudformation --output $(OUT)/trn2-cfn
	@echo "== 5. the same cluster as a CloudFormation stack and as Terraform, from the sample spec"
	$(DEMO_VENV)/bin/neuron-migrator generate cloudformation --spec samples/deploy-spec.yaml --output $(OUT)/stack
	$(DEMO_VENV)/bin/neuron-migrator generate terraform --spec samples/deploy-spec.yaml --output $(OUT)/terraform
	@echo "== 6. assess samples/: readiness, effort, migration path, models, cost (sample fleet, example prices)"
	$(DEMO_VENV)/bin/neuron-migrator assess samples --fleet samples/fleet.yaml --prices samples/prices.yaml
	$(DEMO_VENV)/bin/neuron-migrator assess samples --fleet samples/fleet.yaml --prices samples/prices.yaml --format html -o $(OUT)/assess.html
	@echo "== 7. assess the installed accelerate package (real third-party code; Markdown in $(OUT)/accelerate-assess.md)"
	$(DEMO_VENV)/bin/neuron-migrator assess "$$($(DEMO_VENV)/bin/python -c 'import os, importlib.util as u; print(os.path.dirname(u.find_spec("accelerate").origin))')" \
		--fleet samples/fleet.yaml --prices samples/prices.yaml --format markdown -o $(OUT)/accelerate-assess.md
	@sed -n '1,/^## Effort/p' $(OUT)/accelerate-assess.md
	@echo "== outputs are in $(OUT)/"

# Render demo-out/assess.html in headless Chromium (Debian's `chromium`; installed when missing)
# and save demo-out/assess.png, to look at the page as a browser draws it.
assess-screenshot: $(DEMO_VENV)/.done
	@mkdir -p $(OUT)
	$(DEMO_VENV)/bin/neuron-migrator assess samples --fleet samples/fleet.yaml --prices samples/prices.yaml --format html -o $(OUT)/assess.html
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --user-data-dir="$$(mktemp -d)" --hide-scrollbars \
		--window-size=1200,2600 --screenshot="$(CURDIR)/$(OUT)/assess.png" "file://$(CURDIR)/$(OUT)/assess.html"
	@echo "wrote $(OUT)/assess.png"

# One worker per CPU (pytest-xdist): most tests run the CLI or whole programs in subprocesses.
test: $(TEST_VENV)/.done $(CHECKOV_VENV)/.done $(PCLUSTER_VENV)/.done tests/k8s/node_modules/.done $(TF_SCHEMA)/.done
	$(TEST_VENV)/bin/python -m pytest -q -n auto --durations=25

# PyTorch/XLA 2.9 end to end (not part of `make test`): torch 2.9.0 from PyPI is the CUDA build,
# several GB with its NVIDIA libraries; it runs on the CPU through PJRT_DEVICE=CPU.
$(E2E_VENV)/.done: pyproject.toml
	$(PYTHON) -m venv $(E2E_VENV)
	$(E2E_VENV)/bin/pip install $(PIP) "torch==2.9.0" "torch_xla==2.9.0" "pytest>=8" -e .
	touch $@

e2e: $(E2E_VENV)/.done
	NRN_E2E=1 PJRT_DEVICE=CPU $(E2E_VENV)/bin/python -m pytest -q tests/e2e

# Rewrite tests/golden/ from the current templates; review the result with `git diff`.
goldens: $(TEST_VENV)/.done
	$(TEST_VENV)/bin/python -m pytest -q tests/test_generate.py -k golden --update-goldens

# Regenerate docs/rules.md from rules/ (a test fails when it is stale).
docs: $(TEST_VENV)/.done
	$(TEST_VENV)/bin/python -m migrator.docgen

clean:
	rm -rf $(DEMO_VENV) $(TEST_VENV) $(CHECKOV_VENV) $(PCLUSTER_VENV) $(E2E_VENV) $(OUT) dist build

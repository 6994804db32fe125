#!/usr/bin/env python3
"""Translates an AWS SAM template to plain CloudFormation with the AWS SAM translator
(the aws-sam-translator package `sam build`/`sam deploy` use), without any AWS call.

Usage: sam_translate.py TEMPLATE [OUT.json]

It exits non-zero with the translator's messages when the template does not
translate (an invalid SAM property, a bad event, an unknown policy template, ...);
otherwise it prints the number of resources of the result, by type, and writes the
translated template to OUT.json when given.

The translator looks up the AWS managed policies named by name in a function's
Policies through IAM; here the map is supplied instead: the managed policies SAM
itself attaches (basic execution, X-Ray for Tracing: Active, CodeDeploy for
DeploymentPreference) by their ARNs in the aws partition (IAM User Guide, "AWS
managed policies"). A template naming another managed policy fails, and the name
must be added here.
"""

import json
import logging
import os
import sys
from collections import Counter

from samtranslator.model.exceptions import InvalidDocumentException
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

MANAGED_POLICIES = {
    "AWSLambdaBasicExecutionRole": "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
    "AWSXrayWriteOnlyAccess": "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess",
    "AWSCodeDeployRoleForLambda": "arn:aws:iam::aws:policy/service-role/AWSCodeDeployRoleForLambda",
}


class SuppliedPolicies:
    """A managed policy loader (the translator calls load()) that never calls IAM."""

    def load(self):
        return dict(MANAGED_POLICIES)


def packaged(template):
    """Replaces each function's local CodeUri (a path, as `sam build` reads it) with
    an S3 location, as `sam package` does after uploading the built code: the
    translator accepts only S3 locations."""
    for r in template.get("Resources", {}).values():
        props = r.get("Properties") or {}
        if r.get("Type") == "AWS::Serverless::Function" and isinstance(props.get("CodeUri"), str) \
                and not props["CodeUri"].startswith("s3://"):
            props["CodeUri"] = "s3://sam-package-placeholder/code.zip"
    return template


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    # The translator asks boto3 for the region of the pseudo parameters (ARNs,
    # partition); any region does, nothing is sent.
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    # Without a feature toggle configuration (none is needed: every feature takes
    # its default) the translator warns once per feature it asks about.
    logging.getLogger("samtranslator.feature_toggle").setLevel(logging.ERROR)
    with open(argv[1], encoding="utf-8") as f:
        template = yaml_parse(f.read())
    try:
        out = transform(packaged(template), {}, SuppliedPolicies())
    except InvalidDocumentException as e:
        for cause in e.causes:
            print(f"{argv[1]}: {cause.message}", file=sys.stderr)
        return 1
    types = Counter(r["Type"] for r in out["Resources"].values())
    print(f"{argv[1]}: translated to {len(out['Resources'])} CloudFormation resources")
    for t, n in sorted(types.items()):
        print(f"  {n:3d} {t}")
    if len(argv) == 3:
        with open(argv[2], "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

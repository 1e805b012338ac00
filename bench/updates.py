"""Is a changed fact kept, and a look-alike fact left alone? Update, paraphrase and
look-alike pairs through ``store``, ``save`` and the ``memloom`` command.

    python bench/updates.py [--label after] [--seed 34] [--cli-sample 50] [--cli-jobs 2]
    PYTHONPATH=<checkout of an older commit>/src python bench/updates.py --label before
    python bench/updates.py --dump-fixture     # tests/fixtures/claims/*.json, then exit

A new user with no API key writes on the distance bands (``MEMLOOM_LLM=offline``,
the local embedding model). Each pair is written in a project of its own (the
bands only compare memories of one project), the old statement first:

* an **update pair** changes one value of the old statement (a number, version,
  size, duration, path, URL, e-mail, identifier, quoted string, flag, time, cron
  schedule, state word, negation, or one word swapped). It is kept when the new
  statement is the project's active memory and the old one is not. Beside the 212
  drawn from templates, 62 **written updates** (``WRITTEN_UPDATES``) in the shapes
  real memories take, many with a word or name swapped in the object's place;
* a **paraphrase pair** says the same thing again. It is merged when the project
  has one active memory afterwards;
* a **look-alike pair** (``distinct``) is two facts that look alike and are both
  true at once: mostly one word or name swapped where it names what the sentence is
  about (a component, environment, table, team, flow, audience, file, test kind,
  service, platform, branch, queue, endpoint, job, module, region, language, customer
  tier; ``LOOKALIKES``), plus "a subject and a value" and "two services". Both
  should stay active: each one made a version of the other hides a fact from recall.
  The seed decides which of the two is written first.

Three paths: ``Memloom.store`` (the library call behind ``POST /v1/memory/store``),
``Memloom.save``, and the real ``memloom`` command, one process per write
(``memloom --home H save --project P --json -- TEXT``, the active memories read at the
end from ``memloom --home H export``). The command is slow (about a second a process),
so it writes every look-alike and written update but only ``--cli-sample`` of the
template updates and of the paraphrases (evenly spread over their kinds), in
``--cli-jobs`` homes side by side; the output says what it ran. The command is the
``memloom`` script beside this Python (else the one on ``PATH``); it runs the code
``PYTHONPATH`` points at, like the library paths.

Results are merged by label into ``bench/results/updates.json``. The look-alike and
written update pairs of the default seed are in ``tests/fixtures/claims/`` for the
unit tests (``--dump-fixture`` writes them again).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "claims"
DEFAULT_SEED = 34

SERVICES = ["billing", "payments", "auth", "search", "checkout", "notifications", "reports"]
TOOLS = [
    ("npm", "pnpm"), ("yarn", "pnpm"), ("Postgres", "MySQL"), ("Redis", "Memcached"),
    ("Jest", "Vitest"), ("webpack", "Vite"), ("flake8", "ruff"), ("black", "ruff"),
    ("Docker", "Podman"), ("Kafka", "RabbitMQ"), ("GitHub", "GitLab"), ("Sentry", "Rollbar"),
]  # fmt: skip
STATES = [
    ("enabled", "disabled"), ("on", "off"), ("true", "false"), ("allowed", "denied"),
    ("required", "optional"), ("public", "private"), ("sync", "async"),
]  # fmt: skip


def update_pairs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, old, new): the same statement with one value changed."""
    out: list[tuple[str, str, str]] = []

    def add(kind: str, template: str, old: object, new: object) -> None:
        svc = rng.choice(SERVICES)
        out.append((kind, template.format(v=old, s=svc), template.format(v=new, s=svc)))

    for _ in range(14):
        p = rng.randrange(3000, 9999)
        add("port", "The {s} service runs on port {v}", p, p + rng.randrange(1, 9))
    for _ in range(12):
        a = rng.randrange(14, 20)
        add("version", "Use Node {v} for the {s} frontend build", a, a + 2)
    for _ in range(12):
        a, b, c = rng.randrange(0, 3), rng.randrange(0, 30), rng.randrange(0, 10)
        add("semver", "Pin the {s} SDK to v{v}", f"{a}.{b}.{c}", f"{a}.{b}.{c + 1}")
    for _ in range(12):
        a = rng.choice([5, 10, 20, 50, 100])
        unit = rng.choice(["MB", "GB", "KB"])
        add("size", "Uploads to the {s} API are limited to {v}", f"{a} {unit}", f"{a * 2} {unit}")
    for _ in range(12):
        a = rng.choice([10, 15, 30, 45, 60, 90])
        add("duration", "The {s} request timeout is {v} seconds", a, a + 15)
    for _ in range(8):
        a = rng.choice([70, 75, 80, 85])
        add("percent", "Keep test coverage of the {s} package above {v}%", a, a + 5)
    for _ in range(12):
        a, b = rng.sample(["config.yaml", "settings.toml", "app.json", "env.ini", "conf.d"], 2)
        add("path", "The {s} service reads its config from /etc/{s}/{v}", a, b)
    for _ in range(10):
        a, b = rng.sample(["staging", "stage", "preprod", "qa", "test"], 2)
        add("url", "The {s} dashboard is at https://{v}.acme.dev/{s}", a, b)
    for _ in range(8):
        a, b = rng.sample(["ops", "sre", "oncall", "platform", "infra"], 2)
        add("email", "Page the {s} team at {v}@acme.io", a, b)
    for _ in range(10):
        a, b = rng.sample(["prod", "dr", "archive", "eu", "us"], 2)
        add("bucket", "Backups of the {s} database go to s3://acme-{s}-{v}", a, b)
    for _ in range(12):
        a, b = rng.sample(["api_key", "api_token", "access_token", "client_secret"], 2)
        add("snake_case", "The {s} client reads settings.{v} at start-up", a, b)
    for _ in range(8):
        a, b = rng.sample(["ApiError", "ServiceError", "ClientError", "HttpError"], 2)
        add("CamelCase", "Errors from the {s} client are wrapped in {v}", a, b)
    for _ in range(10):
        a, b = rng.sample(["NEW_CHECKOUT", "FAST_SEARCH", "BETA_REPORTS", "DARK_MODE"], 2)
        add("ALL_CAPS", "The {s} rollout is gated by the flag {v}", a, b)
    for _ in range(8):
        a, b = rng.sample(["eu-west-1", "eu-central-1", "us-east-2", "ap-south-1"], 2)
        add("region", "The {s} service is deployed in {v}", a, b)
    for _ in range(8):
        a, b = rng.sample(["debug", "info", "warning", "error"], 2)
        add("quoted", "Set the {s} log level to '{v}'", a, b)
    for _ in range(8):
        a, b = rng.sample(["-x", "-q", "-v", "--lf", "--ff"], 2)
        add("flag", "Run the {s} tests with pytest {v}", a, b)
    for _ in range(8):
        h = rng.randrange(0, 6)
        add("time", "The {s} nightly job runs at {v} UTC", f"0{h}:00", f"0{h + 2}:30")
    for _ in range(6):
        h = rng.randrange(0, 6)
        add("cron", "The {s} cleanup cron is {v}", f"0 {h} * * *", f"30 {h + 1} * * 1")
    for _ in range(12):
        a, b = rng.choice(STATES)
        add("state", "The {s} feature flag NEW_FLOW is {v} in staging", a, b)
    for _ in range(10):
        svc = rng.choice(SERVICES)
        old = f"The {svc} tests must hit the network"
        out.append(("negation", old, f"The {svc} tests must not hit the network"))
    for _ in range(12):
        a, b = rng.choice(TOOLS)
        add("word swap", "The {s} project uses {v}", a, b)
    return out


def paraphrase_pairs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, old, new): the same statement said again, otherwise."""
    forms = [
        ("synonym", "The {s} service runs on port {p}", "The {s} service listens on port {p}"),
        ("function words", "The {s} service runs on port {p}", "{S} service now runs on port {p}"),
        ("case", "The {s} service runs on port {p}", "the {s} service runs on port {p}"),
        ("order", "In staging, the {s} service runs on port {p}",
         "The {s} service runs on port {p} in staging"),
        ("unit spacing", "Uploads to {s} stop at {n} MB", "Uploads to {s} stop at {n}MB"),
        ("v prefix", "The {s} SDK is pinned to v{n}.2", "The {s} SDK is pinned to {n}.2"),
        ("acronym", "The {s} database listens on port {p}", "The {s} DB listens on port {p}"),
        ("punctuation", "Deploy {s} with make deploy.", "Deploy {s} with make deploy"),
        ("article", "Run the {s} tests with make check", "Run {s} tests with make check"),
        ("inflection", "The {s} worker retries failed jobs", "The {s} worker retried failed jobs"),
        ("repo", "The {s} repo uses GitHub Actions", "The {s} repository uses GitHub Actions"),
    ]  # fmt: skip
    out = []
    for i in range(110):
        kind, a, b = forms[i % len(forms)]
        svc = rng.choice(SERVICES)
        values = {"s": svc, "S": svc.capitalize(), "p": rng.randrange(3000, 9999),
                  "n": rng.randrange(2, 40)}  # fmt: skip
        out.append((kind, a.format(**values), b.format(**values)))
    return out


#: Updates written by hand, in the shapes real memories take (not the templates above):
#: the same statement with its value changed, so the new one replaces the old. Many swap a
#: word or a name in the object's place ("uses Sentry" → "uses Rollbar"); a few change
#: who holds a role only one can hold, which is an update even with the name first.
WRITTEN_UPDATES: list[tuple[str, str, str]] = [
    ("tool", "The app reports errors to Sentry", "The app reports errors to Rollbar"),
    ("tool", "Use npm in this monorepo", "Use pnpm in this monorepo"),
    ("tool", "We deploy the API to Heroku", "We deploy the API to Fly.io"),
    ("tool", "The frontend is bundled with webpack", "The frontend is bundled with Vite"),
    ("tool", "Unit tests run with Jest", "Unit tests run with Vitest"),
    ("tool", "CI runs on CircleCI", "CI runs on GitHub Actions"),
    ("tool", "Format Python code with black", "Format Python code with ruff format"),
    ("tool", "Secrets are stored in AWS Secrets Manager", "Secrets are stored in HashiCorp Vault"),
    ("tool", "The docs site is hosted on Netlify", "The docs site is hosted on Vercel"),
    ("tool", "API payloads are validated with marshmallow",
     "API payloads are validated with pydantic"),
    ("tool", "Background jobs are processed by Celery", "Background jobs are processed by RQ"),
    ("tool", "Passwords are hashed with bcrypt", "Passwords are hashed with argon2"),
    ("tool", "Type-check the backend with mypy", "Type-check the backend with pyright"),
    ("tool", "Transactional emails go out through SendGrid",
     "Transactional emails go out through Postmark"),
    ("tool", "Full-text search is backed by Elasticsearch",
     "Full-text search is backed by OpenSearch"),
    ("tool", "The monorepo is managed with Lerna", "The monorepo is managed with Nx"),
    ("tool", "The backend calls other services with requests",
     "The backend calls other services with httpx"),
    ("tool", "Issues are tracked in Jira", "Issues are tracked in Linear"),
    ("tool", "Static files are served by nginx", "Static files are served by Caddy"),
    ("tool", "User sessions are kept in Redis", "User sessions are kept in Postgres"),
    ("tool", "Build artifacts are cached in S3", "Build artifacts are cached in GCS"),
    ("tool", "JWTs are signed with HS256", "JWTs are signed with RS256"),
    ("name", "The default branch is master", "The default branch is main"),
    ("name", "The test database is called app_test", "The test database is called app_ci"),
    ("name", "Incidents are discussed in #incidents on Slack",
     "Incidents are discussed in #sev-room on Slack"),
    ("name", "The SDK is published on PyPI as acme-sdk",
     "The SDK is published on PyPI as acme-client"),
    ("name", "Uploaded images go to the acme-uploads bucket",
     "Uploaded images go to the acme-media bucket"),
    ("name", "Open pull requests against the develop branch",
     "Open pull requests against the main branch"),
    ("role holder", "Alice is the release manager this quarter",
     "Omar is the release manager this quarter"),
    ("role holder", "The product owner for checkout is Maria",
     "The product owner for checkout is Jonas"),
    ("role holder", "The billing team owns the invoices table",
     "The payments team owns the invoices table"),
    ("number", "The API listens on port 8080", "The API listens on port 8000"),
    ("number", "Pull requests need one approval before merging",
     "Pull requests need two approvals before merging"),
    ("number", "Keep lines under 88 characters", "Keep lines under 100 characters"),
    ("number", "The public API allows 100 requests per minute per key",
     "The public API allows 600 requests per minute per key"),
    ("number", "Coverage must stay above 80%", "Coverage must stay above 85%"),
    ("size", "Attachments larger than 10 MB are rejected",
     "Attachments larger than 25 MB are rejected"),
    ("duration", "Session cookies expire after 30 minutes", "Session cookies expire after 2 hours"),
    ("duration", "Application logs are kept for 14 days", "Application logs are kept for 30 days"),
    ("duration", "Product pages are cached for 60 seconds",
     "Product pages are cached for 300 seconds"),
    ("version", "Python 3.10 is the oldest version we support",
     "Python 3.11 is the oldest version we support"),
    ("version", "CI builds with Node 18", "CI builds with Node 20"),
    ("version", "The primary database is MySQL 5.7", "The primary database is MySQL 8.0"),
    ("version", "We are on SQLAlchemy 1.4", "We are on SQLAlchemy 2.0"),
    ("version", "The iOS app supports iOS 15 and later", "The iOS app supports iOS 16 and later"),
    ("version", "The Docker base image is python:3.11-slim",
     "The Docker base image is python:3.12-slim"),
    ("version", "Pin the Helm chart to 2.3.1", "Pin the Helm chart to 2.4.0"),
    ("path", "Settings are read from config/settings.yaml",
     "Settings are read from config/app.toml"),
    ("path", "Release notes go in CHANGELOG.md", "Release notes go in docs/releases.md"),
    ("path", "Public API routes live under /v1", "Public API routes live under /v2"),
    ("url", "Staging is at https://staging.acme.dev", "Staging is at https://stg.acme.dev"),
    ("email", "Customers write to help@acme.io for support",
     "Customers write to support@acme.io for support"),
    ("time", "The team stand-up is at 9:30", "The team stand-up is at 10:00"),
    ("time", "The on-call rotation hands over every Monday",
     "The on-call rotation hands over every Wednesday"),
    ("cron", "The nightly export runs on the cron 0 2 * * *",
     "The nightly export runs on the cron 0 3 * * *"),
    ("frequency", "Dependabot checks for updates weekly", "Dependabot checks for updates daily"),
    ("state", "The NEW_CHECKOUT flag is off in production",
     "The NEW_CHECKOUT flag is on in production"),
    ("state", "Deploys are frozen on Fridays", "Deploys are allowed on Fridays"),
    ("state", "Sign-ups are invite-only for now", "Sign-ups are open to everyone now"),
    ("negation", "The e2e tests run on every pull request",
     "The e2e tests no longer run on every pull request"),
    ("negation", "Commit the generated client to the repo",
     "Do not commit the generated client to the repo"),
    ("negation", "The staging database is reset every night",
     "The staging database is not reset every night"),
]  # fmt: skip


#: Look-alikes: two statements true at the same time that differ mostly in what they are
#: about (the subject, its scope), written as one would note them on a real project. By
#: the kind of subject swapped; mostly one word or name, some two. Held out: written
#: without looking at the rule, and not to be tuned to it.
LOOKALIKES: dict[str, list[tuple[str, str]]] = {
    "component": [
        ("The frontend uses pnpm for package management",
         "The backend uses pnpm for package management"),
        ("The web app is deployed as a Docker image", "The worker is deployed as a Docker image"),
        ("Error tracking in the mobile app goes through Sentry",
         "Error tracking in the web app goes through Sentry"),
        ("The admin panel is built with React", "The storefront is built with React"),
        ("Lint the backend with ruff before committing",
         "Lint the CLI with ruff before committing"),
        ("Logs from the API gateway are shipped to Loki",
         "Logs from the scheduler are shipped to Loki"),
        ("The CLI reads its settings from ~/.acme/config.toml",
         "The desktop client reads its settings from ~/.acme/config.toml"),
        ("The mobile app talks to the API over GraphQL",
         "The web dashboard talks to the API over GraphQL"),
        ("Feature flags in the frontend come from LaunchDarkly",
         "Feature flags in the backend come from LaunchDarkly"),
        ("The search indexer is written in Go", "The image resizer is written in Go"),
    ],
    "environment": [
        ("In staging, the database is backed up nightly",
         "In production, the database is backed up nightly"),
        ("Debug logging is turned off in production",
         "Debug logging is turned off in the demo environment"),
        ("The staging cluster runs Kubernetes 1.29", "The production cluster runs Kubernetes 1.29"),
        ("Migrations run automatically on deploy to staging",
         "Migrations run automatically on deploy to the preview environments"),
        ("Use the read replica for analytics queries in production",
         "Use the read replica for analytics queries in staging"),
        ("The dev environment seeds the database with fake customers",
         "The QA environment seeds the database with fake customers"),
        ("TLS certificates for staging are issued by Let's Encrypt",
         "TLS certificates for production are issued by Let's Encrypt"),
        ("On CI, tests run against a throwaway Postgres container",
         "Locally, tests run against a throwaway Postgres container"),
        ("Secrets for production live in Vault", "Secrets for staging live in Vault"),
    ],
    "table": [
        ("The orders table is partitioned by month", "The events table is partitioned by month"),
        ("Rows in the audit_log table are never deleted",
         "Rows in the ledger_entries table are never deleted"),
        ("The users table has a unique index on email",
         "The subscribers table has a unique index on email"),
        ("Soft deletes are used on the customers table",
         "Soft deletes are used on the invoices table"),
        ("The sessions table is cleaned up by a nightly job",
         "The password_resets table is cleaned up by a nightly job"),
        ("The products table is replicated to the search cluster",
         "The categories table is replicated to the search cluster"),
        ("The accounts table uses UUID primary keys", "The projects table uses UUID primary keys"),
        ("Writes to the inventory table go through a stored procedure",
         "Writes to the pricing table go through a stored procedure"),
        ("Altering the `shipments` table needs pt-online-schema-change",
         "Altering the `page_views` table needs pt-online-schema-change"),
    ],
    "team": [
        ("The billing team deploys on Tuesdays and Thursdays",
         "The search team deploys on Tuesdays and Thursdays"),
        ("The mobile team runs a retro every other Friday",
         "The web team runs a retro every other Friday"),
        ("The data team writes its pipelines in dbt",
         "The analytics team writes its pipelines in dbt"),
        ("The platform team has its weekly sync on Mondays",
         "The growth team has its weekly sync on Mondays"),
        ("The infra team tracks its work in Linear", "The design team tracks its work in Linear"),
        ("The web team uses Storybook to review components",
         "The mobile team uses Storybook to review components"),
        ("The payments team requires two approvals on every pull request",
         "The identity team requires two approvals on every pull request"),
        ("The QA team gets a Slack alert when a nightly build fails",
         "The release team gets a Slack alert when a nightly build fails"),
    ],
    "flow": [
        ("The signup flow sends a confirmation email",
         "The checkout flow sends a confirmation email"),
        ("The password reset flow is rate limited per IP address",
         "The login flow is rate limited per IP address"),
        ("The onboarding flow is covered by Playwright tests",
         "The checkout flow is covered by Playwright tests"),
        ("The refund flow writes an entry to the audit log",
         "The cancellation flow writes an entry to the audit log"),
        ("The invite flow requires email verification",
         "The signup flow requires email verification"),
        ("Any change to the upgrade flow needs a product review",
         "Any change to the downgrade flow needs a product review"),
        ("The OAuth login flow keeps the state parameter in a signed cookie",
         "The SSO login flow keeps the state parameter in a signed cookie"),
        ("The export flow runs as a background job", "The import flow runs as a background job"),
    ],
    "audience": [
        ("Admins can export reports as CSV", "Editors can export reports as CSV"),
        ("Viewers can comment on documents", "Editors can comment on documents"),
        ("Support agents can impersonate customers from the admin panel",
         "On-call engineers can impersonate customers from the admin panel"),
        ("Owners can invite new members to a workspace",
         "Admins can invite new members to a workspace"),
        ("Anonymous visitors are shown the cookie banner",
         "Logged-in users are shown the cookie banner"),
        ("Internal users get new features a week early",
         "Beta testers get new features a week early"),
        ("Contractors need the VPN to reach the staging environment",
         "Employees need the VPN to reach the staging environment"),
        ("Service accounts authenticate with bearer tokens",
         "CLI users authenticate with bearer tokens"),
    ],
    "owner": [
        ("The platform team owns the Terraform modules", "The platform team owns the Helm charts"),
        ("Priya is the code owner for the billing module",
         "Priya is the code owner for the invoicing module"),
        ("Marco maintains the release scripts", "Marco maintains the CI pipeline"),
        ("The data team owns the events table", "The data team owns the sessions table"),
        ("@acme/security is listed in CODEOWNERS for auth/",
         "@acme/platform is listed in CODEOWNERS for auth/"),
        ("The mobile team is responsible for the push notification service",
         "The mobile team is responsible for the deep link service"),
        ("Questions about the payments API go to Lena",
         "Questions about the refunds API go to Lena"),
        ("The SRE team owns the on-call runbooks", "The SRE team owns the alerting rules"),
    ],
    "file": [
        ("Do not edit `src/generated/schema.py` by hand",
         "Do not edit `src/generated/client.py` by hand"),
        ("`config/local.yaml` is in .gitignore", "`config/secrets.yaml` is in .gitignore"),
        ("`src/api/auth.py` has no unit tests yet", "`src/api/users.py` has no unit tests yet"),
        ("`docker-compose.yml` starts Postgres on port 5432",
         "`docker-compose.test.yml` starts Postgres on port 5432"),
        ("`scripts/deploy.sh` must be run from the repo root",
         "`scripts/seed.sh` must be run from the repo root"),
        ("`web/package-lock.json` is committed to the repo",
         "`docs/package-lock.json` is committed to the repo"),
        ("`tsconfig.base.json` enables strict mode", "`tsconfig.test.json` enables strict mode"),
        ("The migration `0042_add_orders_index.py` is irreversible",
         "The migration `0057_drop_legacy_users.py` is irreversible"),
    ],
    "test kind": [
        ("Run the unit tests with pytest -x", "Run the integration tests with pytest -x"),
        ("The e2e tests are skipped on pull requests from forks",
         "The integration tests are skipped on pull requests from forks"),
        ("Snapshot tests live next to the components they cover",
         "Unit tests live next to the components they cover"),
        ("The smoke tests must pass before a release is tagged",
         "The contract tests must pass before a release is tagged"),
        ("Load tests are written in k6", "Soak tests are written in k6"),
        ("Integration tests need Docker running locally",
         "End-to-end tests need Docker running locally"),
        ("In CI, the UI tests run in headless Chrome",
         "In CI, the visual regression tests run in headless Chrome"),
        ("The database tests are marked with @pytest.mark.integration",
         "The network tests are marked with @pytest.mark.integration"),
    ],
    "service": [
        ("The billing service publishes its events to Kafka",
         "The shipping service publishes its events to Kafka"),
        ("The search service keeps its cache in Redis",
         "The pricing service keeps its cache in Redis"),
        ("Restart the notifications service after changing its templates",
         "Restart the reports service after changing its templates"),
        ("Health checks for the payments service hit /healthz",
         "Health checks for the orders service hit /healthz"),
        ("The gateway forwards requests to the user service over gRPC",
         "The gateway forwards requests to the catalog service over gRPC"),
        ("The recommendations service has no staging deployment",
         "The geocoding service has no staging deployment"),
        ("The inventory service is deployed with Argo CD",
         "The checkout service is deployed with Argo CD"),
        ("Metrics from the ledger service are scraped by Prometheus",
         "Metrics from the fraud service are scraped by Prometheus"),
    ],
    "platform": [
        ("The CLI is tested on macOS in CI", "The CLI is tested on Windows in CI"),
        ("The desktop app ships as a signed installer for Windows",
         "The desktop app ships as a signed installer for macOS"),
        ("Release builds for Linux are made in GitHub Actions",
         "Release builds for macOS are made in GitHub Actions"),
        ("The iOS app uses Firebase for push notifications",
         "The Android app uses Firebase for push notifications"),
        ("On WSL, set CHOKIDAR_USEPOLLING=1 for hot reload",
         "Inside Docker, set CHOKIDAR_USEPOLLING=1 for hot reload"),
        ("ARM64 images are pushed to the registry on every release",
         "AMD64 images are pushed to the registry on every release"),
        ("The agent binary supports Ubuntu 22.04", "The agent binary supports Debian 12"),
    ],
    "branch": [
        ("The main branch is protected and needs one approval",
         "The release branch is protected and needs one approval"),
        ("Pushes to main trigger the full test suite",
         "Pushes to develop trigger the full test suite"),
        ("Force-pushing to main is disabled", "Force-pushing to release/* is disabled"),
        ("Feature branches are deleted after merge", "Hotfix branches are deleted after merge"),
        ("CI runs the nightly benchmarks on the main branch",
         "CI runs the nightly benchmarks on the perf branch"),
        ("Commits on the release branch must be signed",
         "Commits on the main branch must be signed"),
        ("Merges into main are squash-only", "Merges into develop are squash-only"),
    ],
    "queue/topic": [
        ("The orders.created topic has 12 partitions",
         "The payments.captured topic has 12 partitions"),
        ("Messages on the email queue are retried five times",
         "Messages on the sms queue are retried five times"),
        ("The webhooks queue has a dead-letter queue", "The exports queue has a dead-letter queue"),
        ("Consumers of the user-events topic must be idempotent",
         "Consumers of the billing-events topic must be idempotent"),
        ("The thumbnails queue is processed by Celery workers",
         "The transcoding queue is processed by Celery workers"),
        ("Retention on the audit topic is 30 days",
         "Retention on the clickstream topic is 30 days"),
        ("Do not purge the invoices queue in production",
         "Do not purge the refunds queue in production"),
    ],
    "endpoint": [
        ("The /v1/orders endpoint is paginated with a cursor",
         "The /v1/customers endpoint is paginated with a cursor"),
        ("POST /login is rate limited to 5 requests a minute",
         "POST /password-reset is rate limited to 5 requests a minute"),
        ("GET /health does not require authentication",
         "GET /version does not require authentication"),
        ("The /admin routes require a second factor",
         "The /billing routes require a second factor"),
        ("The search endpoint returns at most 100 results",
         "The autocomplete endpoint returns at most 100 results"),
        ("Responses from /v2/products are cached by the CDN for five minutes",
         "Responses from /v2/categories are cached by the CDN for five minutes"),
        ("The upload endpoint streams the request body to S3",
         "The import endpoint streams the request body to S3"),
        ("DELETE /users/{id} is a soft delete", "DELETE /projects/{id} is a soft delete"),
    ],
    "job": [
        ("The nightly backup job runs at 02:00 UTC", "The nightly cleanup job runs at 02:00 UTC"),
        ("The invoice job is scheduled with Celery beat",
         "The reminder job is scheduled with Celery beat"),
        ("The reindex job can safely be re-run", "The sitemap job can safely be re-run"),
        ("If the export job fails, it pages the on-call engineer",
         "If the billing job fails, it pages the on-call engineer"),
        ("The ETL job writes its output to the warehouse bucket",
         "The usage job writes its output to the warehouse bucket"),
        ("The cache warm-up job runs after every deploy",
         "The smoke test job runs after every deploy"),
        ("The weekly report is emailed to the finance team",
         "The monthly report is emailed to the finance team"),
        ("Run the backfill job by hand before the release",
         "Run the reconciliation job by hand before the release"),
    ],
    "module": [
        ("The `utils` package must not import from `api`",
         "The `models` package must not import from `api`"),
        ("The payments module is type-checked with mypy --strict",
         "The auth module is type-checked with mypy --strict"),
        ("Everything in `core/` is pure Python with no I/O",
         "Everything in `domain/` is pure Python with no I/O"),
        ("The `legacy/` folder is excluded from ruff",
         "The `vendor/` folder is excluded from ruff"),
        ("The CLI imports the `reports` module lazily",
         "The CLI imports the `plots` module lazily"),
        ("Public functions in the `sdk` package need docstrings",
         "Public functions in the `client` package need docstrings"),
        ("The tokenizer module has full branch coverage",
         "The parser module has full branch coverage"),
    ],
    "region": [
        ("In eu-west-1, the database runs on Aurora", "In us-east-1, the database runs on Aurora"),
        ("Customer data in the EU region is encrypted with a customer-managed key",
         "Customer data in the US region is encrypted with a customer-managed key"),
        ("Deploys to ap-southeast-2 happen after business hours",
         "Deploys to eu-central-1 happen after business hours"),
        ("The EU cluster runs three replicas of the API",
         "The US cluster runs three replicas of the API"),
        ("Logs from the APAC region are kept for 90 days",
         "Logs from the EMEA region are kept for 90 days"),
        ("Payments in the UK go through Stripe", "Payments in Germany go through Stripe"),
    ],
    "language": [
        ("Python code is linted in CI", "Go code is linted in CI"),
        ("The Go services are built with Bazel", "The Java services are built with Bazel"),
        ("Pre-commit formats the Python files on commit",
         "Pre-commit formats the TypeScript files on commit"),
        ("The German translation is reviewed by a native speaker",
         "The Japanese translation is reviewed by a native speaker"),
        ("The Python SDK is generated from the OpenAPI spec",
         "The Go SDK is generated from the OpenAPI spec"),
        ("The French docs are built from the same Markdown sources",
         "The Spanish docs are built from the same Markdown sources"),
    ],
    "customer tier": [
        ("Enterprise customers get SSO with SAML", "Business customers get SSO with SAML"),
        ("Trial workspaces are limited to three projects",
         "Free-tier workspaces are limited to three projects"),
        ("Pro accounts get priority support", "Enterprise accounts get priority support"),
        ("Data of enterprise customers is backed up hourly",
         "Data of premium customers is backed up hourly"),
        ("Audit logs are available on the Business plan",
         "Audit logs are available on the Enterprise plan"),
        ("Usage on the Team plan is billed monthly", "Usage on the Starter plan is billed monthly"),
    ],
}  # fmt: skip


def distinct_pairs(rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, first, second): two facts that look alike and are both true. What the
    value rule costs: each one made a version of the other hides a fact from recall."""
    out = []
    subjects = [("frontend", "backend"), ("staging", "production"), ("web", "worker")]
    for _ in range(15):
        a, b = rng.choice(subjects)
        p = rng.randrange(3000, 9999)
        out.append(("subject and value", f"The {a} server listens on port {p}",
                    f"The {b} server listens on port {p + 1}"))  # fmt: skip
    for _ in range(10):
        s1, s2 = rng.sample(SERVICES, 2)
        out.append(("two services", f"The {s1} service owns the invoices table",
                    f"The {s2} service reads the invoices table every hour"))  # fmt: skip
    for kind, pairs in LOOKALIKES.items():
        for first, second in pairs:
            out.append((kind, *((second, first) if rng.random() < 0.5 else (first, second))))
    return out


def all_pairs(seed: int) -> tuple[list[tuple[str, str, str]], ...]:
    """The template updates, the paraphrases and the look-alikes of this seed."""
    rng = random.Random(seed)
    updates, paraphrases = update_pairs(rng), paraphrase_pairs(rng)
    return updates, paraphrases, distinct_pairs(rng)


def dump_fixture(seed: int = DEFAULT_SEED) -> list[Path]:
    """``tests/fixtures/claims/lookalikes.json`` and ``updates.json`` for the unit tests."""
    distinct = all_pairs(seed)[2]
    FIXTURES.mkdir(parents=True, exist_ok=True)
    files = {
        "lookalikes.json": [{"kind": k, "first": a, "second": b} for k, a, b in distinct],
        "updates.json": [{"kind": k, "old": a, "new": b} for k, a, b in WRITTEN_UPDATES],
    }
    for name, rows in files.items():
        (FIXTURES / name).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    return [FIXTURES / name for name in files]


#: One pair written in a project of its own: (section, index, kind, texts in order).
Group = tuple[str, int, str, tuple[str, ...]]
#: What became of it: the outcome of each write, and the project's active texts after.
Result = tuple[list[str], list[str]]


def project_of(group: Group) -> str:
    return f"/bench/{group[0]}/{group[1]}"


def groups_of(section: str, pairs: Iterable[tuple[str, str, str]]) -> list[Group]:
    return [(section, n, kind, (a, b)) for n, (kind, a, b) in enumerate(pairs)]


def spread(items: list[Group], n: int) -> list[Group]:
    """``n`` of ``items`` evenly spaced (the lists run kind by kind: every kind is in)."""
    if n >= len(items):
        return items
    return [items[i * len(items) // n] for i in range(n)]


def library_path(memloom: Any, path: str, groups: list[Group]) -> dict[str, Result]:
    """Every pair through ``Memloom.store`` or ``Memloom.save``, in one store."""
    home = Path(tempfile.mkdtemp(prefix=f"memloom-updates-{path}-"))
    m = memloom.open(home=str(home))
    out: dict[str, Result] = {}
    try:
        for group in groups:
            project = project_of(group)
            outcomes = [write(m, path, text, project) for text in group[3]]
            out[project] = (outcomes, active_texts(m, project))
    finally:
        m.close()
        shutil.rmtree(home, ignore_errors=True)
    return out


def write(m: Any, path: str, text: str, project: str) -> str:
    """One statement through ``store`` or ``save``; what happened to it."""
    if path == "store":
        r = m.store({"entries": [{"text": text, "project": project}]})
        if r.merged or r.deduplicated:
            return "merged"
        if getattr(r, "versioned", None):  # absent before issue 40
            return "versioned"
        return "conflict" if r.conflicts else "stored"
    return m.save({"text": text, "project": project}).outcome


def active_texts(m: Any, project: str) -> list[str]:
    page = m.list({"project": project, "limit": 10})
    return sorted(d.text for d in page.memories if d.project == project)


def memloom_command() -> list[str]:
    """The ``memloom`` console script of this Python, else the one on ``PATH``."""
    beside = Path(sys.executable).parent / "memloom"
    found = str(beside) if beside.exists() else shutil.which("memloom")
    if found is None:
        raise SystemExit("no memloom command: install the package (pip install -e .)")
    return [found]


def cli_path(command: list[str], groups: list[Group], jobs: int) -> dict[str, Result]:
    """Every pair through ``memloom save``, a process per write: the groups dealt to
    ``jobs`` homes of their own, each home's writes one after the other; the active
    memories of each project read from ``memloom export`` at the end."""
    env = {**os.environ, "MEMLOOM_LLM": "offline"}
    env.pop("MEMLOOM_HOME", None)
    homes = [Path(tempfile.mkdtemp(prefix=f"memloom-updates-cli{j}-")) for j in range(jobs)]

    def memloom(home: Path, *args: str) -> str:
        done = subprocess.run([*command, "--home", str(home), *args], env=env, text=True,
                              capture_output=True, timeout=300)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"memloom {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
        return done.stdout

    def work(j: int) -> dict[str, list[str]]:
        outcomes: dict[str, list[str]] = {}
        for group in groups[j::jobs]:
            project = project_of(group)
            outcomes[project] = [
                json.loads(memloom(homes[j], "save", "--project", project, "--json", "--", text))[
                    "outcome"
                ]
                for text in group[3]
            ]
        return outcomes

    try:
        with ThreadPoolExecutor(jobs) as pool:
            outcomes = {k: v for part in pool.map(work, range(jobs)) for k, v in part.items()}
        active: dict[str, list[str]] = defaultdict(list)
        for home in homes:
            for line in memloom(home, "export").splitlines():
                record = json.loads(line)
                if record.get("kind") == "memory" and record["status"] == "active":
                    active[record["project"]].append(record["text"])
    finally:
        for home in homes:
            shutil.rmtree(home, ignore_errors=True)
    return {p: (o, sorted(active.get(p, []))) for p, o in outcomes.items()}


def pct(n: int, total: int) -> float | None:
    return round(100 * n / total, 1) if total else None


def by_kind(groups: list[Group], hit: Callable[[Group], bool]) -> dict[str, str]:
    total: Counter[str] = Counter(g[2] for g in groups)
    good: Counter[str] = Counter(g[2] for g in groups if hit(g))
    return {k: f"{good[k]}/{total[k]}" for k in total}


def score(groups: list[Group], results: dict[str, Result]) -> dict[str, Any]:
    """The figures of one path over the groups it wrote."""
    section: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        section[g[0]].append(g)
    updates, written = section["update"], section["written"]
    paraphrases, distinct = section["paraphrase"], section["distinct"]

    def outcome(g: Group) -> str:
        return results[project_of(g)][0][-1]

    def active(g: Group) -> list[str]:
        return results[project_of(g)][1]

    def kept(g: Group) -> bool:
        return active(g) == [g[3][1]]

    def both(g: Group) -> bool:
        return active(g) == sorted(g[3])

    def miss(g: Group, names: tuple[str, str]) -> dict[str, Any]:
        left = [name for name, text in zip(names, g[3], strict=True) if text in active(g)]
        return {"kind": g[2], names[0]: g[3][0], names[1]: g[3][1], "outcome": outcome(g),
                "active": left}  # fmt: skip

    def told(g: Group) -> bool:
        """Kept, or both active with the pair in the answer's ``conflicts``: what the
        Distill ``store`` does past the duplicate band, the caller then superseding."""
        return kept(g) or (outcome(g) == "conflict" and both(g))

    n_kept = sum(map(kept, updates))
    n_told = sum(map(told, updates))
    n_written = sum(map(kept, written))
    n_merged = sum(len(active(g)) == 1 for g in paraphrases)
    n_both = sum(map(both, distinct))
    return {
        "updates": len(updates),
        "updates_kept": n_kept,
        "updates_kept_pct": pct(n_kept, len(updates)),
        "by_kind": by_kind(updates, kept),
        "updates_kept_or_flagged": n_told,
        "updates_kept_or_flagged_pct": pct(n_told, len(updates)),
        "written_updates_kept_or_flagged": sum(map(told, written)),
        "update_outcomes": dict(Counter(map(outcome, updates))),
        "written_updates": len(written),
        "written_updates_kept": n_written,
        "written_updates_kept_pct": pct(n_written, len(written)),
        "written_by_kind": by_kind(written, kept),
        "written_missed": [miss(g, ("old", "new")) for g in written if not kept(g)],
        "paraphrases": len(paraphrases),
        "paraphrases_merged": n_merged,
        "paraphrases_merged_pct": pct(n_merged, len(paraphrases)),
        "distinct": len(distinct),
        "distinct_both_kept": n_both,
        "distinct_both_kept_pct": pct(n_both, len(distinct)),
        "distinct_by_kind": by_kind(distinct, both),
        "distinct_outcomes": dict(Counter(map(outcome, distinct))),
        "distinct_missed": [miss(g, ("first", "second")) for g in distinct if not both(g)],
    }


def run(label: str, seed: int, cli_sample: int | None, cli_jobs: int) -> dict:
    os.environ["MEMLOOM_LLM"] = "offline"
    import memloom

    updates, paraphrases, distinct = all_pairs(seed)
    u = groups_of("update", updates)
    w = groups_of("written", WRITTEN_UPDATES)
    p = groups_of("paraphrase", paraphrases)
    d = groups_of("distinct", distinct)
    groups = u + w + p + d
    doc: dict = {
        "label": label,
        "memloom": str(Path(memloom.__file__).parent),
        "seed": seed,
        "updates": len(updates),
        "written_updates": len(WRITTEN_UPDATES),
        "paraphrases": len(paraphrases),
        "distinct": len(distinct),
    }
    for path in ("store", "save"):
        started = time.perf_counter()
        results = library_path(memloom, path, groups)
        doc[path] = {**score(groups, results), "seconds": round(time.perf_counter() - started, 1)}
    if cli_sample is not None:
        command = memloom_command()
        chosen = spread(u, cli_sample) + w + spread(p, cli_sample) + d
        calls = sum(len(g[3]) for g in chosen)
        note = (f"memloom command, a process per write ({calls} writes, {cli_jobs} homes side by "
                f"side): {min(cli_sample, len(u))} of {len(u)} template updates and "
                f"{min(cli_sample, len(p))} of {len(p)} paraphrases (evenly spread), every "
                f"written update ({len(w)}) and look-alike ({len(d)})")  # fmt: skip
        print(f"cli: {note} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        results = cli_path(command, chosen, cli_jobs)
        seconds = time.perf_counter() - started
        doc["cli"] = {
            **score(chosen, results),
            "seconds": round(seconds, 1),
            "command": " ".join(command),
            "jobs": cli_jobs,
            "writes": calls,
            "sample": note,
        }
    return doc


def summary(doc: dict) -> str:
    lines = [
        f"{doc['label']} (seed {doc['seed']}, {doc['memloom']})",
        "path   updates kept (or flagged)   written kept (or flagged)   paraphrases merged"
        "   look-alikes both kept   s",
    ]
    for path in ("store", "save", "cli"):
        if path not in doc:
            continue
        r = doc[path]
        lines.append(
            f"{path:6} {r['updates_kept']:>3}/{r['updates']:<3} {r['updates_kept_pct']:>5}%"
            f" ({r['updates_kept_or_flagged']:>3})"
            f"  {r['written_updates_kept']:>2}/{r['written_updates']:<2} "
            f"{r['written_updates_kept_pct']:>5}% ({r['written_updates_kept_or_flagged']:>2})"
            f"  {r['paraphrases_merged']:>3}/"
            f"{r['paraphrases']:<3} {r['paraphrases_merged_pct']:>5}%      "
            f"{r['distinct_both_kept']:>3}/{r['distinct']:<3} "
            f"{r['distinct_both_kept_pct']:>5}%       {r['seconds']}"
        )
    if "cli" in doc:
        lines.append(f"cli: {doc['cli']['sample']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--label", default="after")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--cli-sample", type=int, default=50, metavar="N",
        help="this many template updates and as many paraphrases through the memloom "
        "command (every look-alike and written update go too)",
    )  # fmt: skip
    parser.add_argument("--cli-jobs", type=int, default=min(4, os.cpu_count() or 1),
                        help="memloom homes written side by side on the CLI path")  # fmt: skip
    parser.add_argument("--no-cli", action="store_true", help="only store and save")
    parser.add_argument("--dump-fixture", action="store_true",
                        help=f"write {FIXTURES.relative_to(FIXTURES.parents[2])}/lookalikes.json "
                             "and updates.json (for --seed) and exit")  # fmt: skip
    args = parser.parse_args()
    if args.dump_fixture:
        for path in dump_fixture(args.seed):
            print(path)
        return
    started = time.perf_counter()
    doc = run(args.label, args.seed, None if args.no_cli else args.cli_sample, args.cli_jobs)
    doc["seconds"] = round(time.perf_counter() - started, 1)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "updates.json"
    runs = json.loads(out.read_text()) if out.exists() else {}
    runs[args.label] = {**doc, "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                        "loadavg": os.getloadavg()}  # fmt: skip
    out.write_text(json.dumps(runs, indent=2) + "\n")
    print(json.dumps(doc, indent=2))
    print(summary(doc), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

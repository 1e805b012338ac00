"""Vendor credential formats: the data half of the detector.

Each rule is a regex for one issuer's token format plus the lower-case literals
("anchors") that must occur where it matches. The engine finds all anchors in one pass
and runs a rule only in the neighbourhood of its anchors, so 150+ rules cost about as
much as one. Formats follow the issuers' published token layouts (prefix, alphabet,
length); the rule ids echo the gitleaks ids where one exists, so scores can be compared.

Context-only secrets (a bare 32-hex value that is only a secret because the variable is
called `ETSY_TOKEN`) are not here: `assign.py` handles every `NAME = value` form once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .model import CREDENTIALS, PII
from .validators import (
    bitcoin_base58_ok,
    discord_token_ok,
    looks_wordy,
    segwit_address_ok,
    shannon_entropy,
)


@dataclass(frozen=True, slots=True)
class TokenRule:
    """One credential format.

    regex: the secret is the named group `s` if present, else the whole match.
    anchors: lower-case literals, one of which lies inside [match.start - back, match.end).
        An anchor normally starts a token (the character before it is a separator);
        `inside=True` marks anchors found in the middle of a token (`q~`). An inside
        anchor that contains a separator (`:A`) is matched case-sensitively in the text.
    entropy: minimum Shannon entropy of the secret (rejects `ghp_xxxxxxxx…`).
    back / ahead: the rule is searched in [anchor - back, anchor + ahead); rules that
        look behind their anchor keep both small so a flood of anchors stays linear.
    check: extra predicate on the secret (e.g. reject documentation examples).
    shape: for formats with no literal prefix (Discord bot tokens, Bitcoin addresses,
        Twilio SIDs): (first characters, bytes regex for the rest) that a whole token
        must match in the scan buffer (lower-case, separators read as spaces). The
        engine grafts each shape onto the anchor trie under its first characters, so
        shapes cost no extra pass and nothing at tokens that start otherwise.
    """

    id: str
    regex: str
    anchors: tuple[str, ...]
    entropy: float = 0.0
    back: int = 0
    ahead: int = 4096
    inside: bool = False
    flags: int = 0
    check: Callable[[str], bool] | None = None
    level: int = CREDENTIALS
    shape: tuple[str, bytes] | None = None

    def compile(self) -> re.Pattern[str]:
        return re.compile(self.regex, self.flags)


# Boundaries. `B` refuses to start inside a longer token; `E` refuses to stop inside one.
B = r"(?<![A-Za-z0-9_+/.\-])"
E = r"(?![A-Za-z0-9_\-])"
E64 = r"(?![A-Za-z0-9_+/=\-])"
IC = re.IGNORECASE
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

# Example values that are public on purpose: the AWS documentation key pair and the
# Firebase Android SDK test keys (as allow-listed by gitleaks' gcp-api-key rule, MIT).
# Masking them protects nothing and they appear in docs and tests everywhere.
KNOWN_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AIzaSyabcdefghijklmnopqrstuvwxyz1234567",
        "AIzaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs",
        "AIzaSyCkEhVjf3pduRDt6d1yKOMitrUEke8agEM",
        "AIzaSyDMAScliyLx7F0NPDEJi1QmyCgHIAODrlU",
        "AIzaSyD3asb-2pEZVqMkmL6M9N6nHZRR_znhrh0",
        "AIzayDNSXIbFmlXbIE6mCzDLQAqITYefhixbX4A",
        "AIzaSyAdOS2zB6NCsk1pCdZ4-P6GBdi_UUPwX7c",
        "AIzaSyASWm6HmTMdYWpgMnjRBjxcQ9CKctWmLd4",
        "AIzaSyANUvH9H9BsUccjsu2pCmEkOPjjaXeDQgY",
        "AIzaSyA5_iVawFQ8ABuTZNUdcwERLJv_a_p4wtM",
        "AIzaSyA4UrcGxgwQFTfaI3no3t7Lt1sjmdnP5sQ",
        "AIzaSyDSb51JiIcB6OJpwwMicseKRhhrOq1cS7g",
        "AIzaSyBF2RrAIm4a0mO64EShQfqfd2AFnzAvvuU",
        "AIzaSyBcE-OOIbhjyR83gm4r2MFCu4MJmprNXsw",
        "AIzaSyB8qGxt4ec15vitgn44duC5ucxaOi4FmqE",
        "AIzaSyA8vmApnrHNFE0bApF4hoZ11srVL_n0nvY",
    }
)


def _not_example(value: str) -> bool:
    return not value.upper().endswith("EXAMPLE") and "EXAMPLEKEY" not in value.upper()


def _slack_tail(value: str) -> bool:
    """The part after the numeric ids must look random; with no ids at all (the older
    `xoxa-`/`xoxr-` layouts) it must be mixed letters and digits with some entropy."""
    parts = value.split("-")
    tail = parts[-1]
    if looks_wordy(tail):
        return False
    if len(parts) == 2 or (len(parts) == 3 and len(parts[1]) == 1):  # xoxa-<tail>, xoxa-2-<tail>
        return _mixed_digit(tail) and len(tail) >= 10 and shannon_entropy(tail) >= 3.0
    return (_mixed_digit(tail) or len(tail) >= 20) and shannon_entropy(tail) >= 2.5


def _hex_mixed(value: str) -> bool:
    """A random hex body has both letters and digits (`SK` + 32 digits is a number)."""
    body = value[2:]
    return _mixed_digit(body) and shannon_entropy(body) >= 3.0


def _mixed_case(value: str) -> bool:
    return any(c.islower() for c in value) and any(c.isupper() for c in value)


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


def _mixed_digit(value: str) -> bool:
    return _has_digit(value) and any(c.isalpha() for c in value)


R = TokenRule
RULES: tuple[TokenRule, ...] = (
    # ---------------------------------------------------------------- clouds
    R(
        "aws-access-key",
        B + r"(?P<s>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})" + E,
        ("akia", "asia", "abia", "acca", "a3t"),
        entropy=3.0,
        check=_not_example,
    ),
    R("aws-bedrock-key", B + r"(?P<s>ABSK[A-Za-z0-9+/]{109,269}={0,2})" + E64, ("absk",)),
    R(
        "aws-bedrock-key",
        B + r"(?P<s>bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&.\-]*)",
        ("bedrock-api-key-",),
    ),
    R("gcp-api-key", B + r"(?P<s>AIza[\w-]{35})" + E, ("aiza",), entropy=4.0),
    R("google-oauth-secret", B + r"(?P<s>GOCSPX-[\w-]{28})" + E, ("gocspx-",)),
    R("google-oauth-token", B + r"(?P<s>ya29\.[\w-]{30,})", ("ya29.",), entropy=3.5),
    R("google-refresh-token", B + r"(?P<s>1//0[\w-]{40,})", ("1//0",), entropy=3.5),
    R(
        "azure-ad-client-secret",
        r"(?:^|[\\'\"`\s>=:(,)])(?P<s>[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.\-]{31,34})(?=$|[\\'\"`\s<),])",
        ("q~",),
        back=6,
        ahead=48,
        inside=True,
        entropy=3.0,
    ),
    R("azure-storage-key", r"(?i:AccountKey)=(?P<s>[A-Za-z0-9+/]{86}==)", ("accountkey=",)),
    R(
        "azure-sas-token",
        r"[?&]sig=(?P<s>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})",
        ("sig=",),
        back=1,
        ahead=400,
    ),
    R(
        "azure-devops-pat",
        r"(?i:azure|ado|devops)[\w.\-]{0,20}?(?i:pat|token)[\w.\-]{0,10}['\"]?\s*[:=]\s*['\"]?(?P<s>[a-z2-7]{52}|[A-Za-z0-9]{84})"
        + E,
        ("azure", "devops"),
        entropy=3.0,
    ),
    R("alibaba-access-key-id", B + r"(?P<s>LTAI[a-zA-Z0-9]{20})" + E, ("ltai",), entropy=2.0),
    R(
        "digitalocean-token",
        B + r"(?P<s>do[opr]_v1_[a-f0-9]{64})" + E,
        ("doo_v1_", "dop_v1_", "dor_v1_"),
    ),
    R("heroku-api-key-v2", B + r"(?P<s>HRKU-AA[\w-]{58})" + E, ("hrku-",)),
    R("yandex-api-key", B + r"(?P<s>AQVN[A-Za-z0-9_\-]{35,38})" + E, ("aqvn",), entropy=3.0),
    R(
        "yandex-access-token",
        B + r"(?P<s>t1\.[A-Z0-9a-z_\-]+=*\.[A-Z0-9a-z_\-]{86}=*)" + E64,
        ("t1.",),
    ),
    R(
        "flyio-token",
        B
        + r"(?P<s>(?:fo1_[\w-]{43}"
        + r"|fm1[ar]_[a-zA-Z0-9+/]{100,}={0,3}|fm2_[a-zA-Z0-9+/]{100,}={0,3}))",
        ("fo1_", "fm1a_", "fm1r_", "fm2_"),
        entropy=3.0,
    ),
    R("openshift-user-token", B + r"(?P<s>sha256~[\w-]{43})" + E, ("sha256~",), entropy=3.5),
    R(
        "hashicorp-tf-api-token",
        r"(?P<s>[a-z0-9]{14}\.atlasv1\.[a-z0-9\-_=]{60,70})" + E,
        ("atlasv1",),
        back=16,
        ahead=90,
        flags=IC,
    ),
    R(
        "vault-token",
        B + r"(?P<s>hvs\.[\w-]{90,120}|hvb\.[\w-]{138,300}|hvr\.[\w-]{90,120})" + E,
        ("hvs.", "hvb.", "hvr."),
        entropy=3.5,
    ),
    R("scalingo-api-token", B + r"(?P<s>tk-us-[\w-]{48})" + E, ("tk-us-",), entropy=2.0),
    R("cloudflare-origin-ca-key", B + r"(?P<s>v1\.0-[a-f0-9]{24}-[a-f0-9]{146})" + E, ("v1.0-",)),
    R("databricks-api-token", B + r"(?P<s>dapi[a-f0-9]{32}(?:-\d)?)" + E, ("dapi",), entropy=3.0),
    R(
        "doppler-api-token",
        B + r"(?P<s>dp\.(?:pt|st|sa|ct|scim|audit)\.[a-z0-9]{40,44})" + E,
        ("dp.",),
        flags=IC,
        entropy=2.0,
    ),
    R(
        "dynatrace-api-token",
        B + r"(?P<s>dt0[a-zA-Z]\d{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64})" + E,
        ("dt0",),
        flags=IC,
    ),
    R("pulumi-api-token", B + r"(?P<s>pul-[a-f0-9]{40})" + E, ("pul-",), entropy=2.0),
    R("prefect-api-token", B + r"(?P<s>pnu_[a-zA-Z0-9]{36})" + E, ("pnu_",), entropy=2.0),
    R(
        "planetscale-token",
        B + r"(?P<s>pscale_(?:pw|tkn|oauth)_[\w=.\-]{32,64})" + E,
        ("pscale_",),
        entropy=3.0,
    ),
    R("render-api-key", B + r"(?P<s>rnd_[A-Za-z0-9]{32})" + E, ("rnd_",), entropy=3.0),
    R("infracost-api-token", B + r"(?P<s>ico-[a-zA-Z0-9]{32})" + E, ("ico-",), entropy=3.0),
    R(
        "octopus-deploy-api-key",
        B + r"(?P<s>API-[A-Z0-9]{26})" + E,
        ("api-",),
        entropy=3.0,
        check=_mixed_digit,
    ),
    R(
        "harness-api-key",
        B + r"(?P<s>(?:pat|sat)\.[\w-]{22}\.[0-9a-f]{24}\.[0-9a-zA-Z]{20})" + E,
        ("pat.", "sat."),
    ),
    R(
        "settlemint-token",
        B + r"(?P<s>sm_(?:aat|pat|sat)_[a-zA-Z0-9]{16})" + E,
        ("sm_",),
        entropy=3.0,
    ),
    R(
        "grafana-api-key",
        B + r"(?P<s>eyJrIjoi[A-Za-z0-9]{70,400}={0,3})" + E64,
        ("eyjrijoi",),
        entropy=3.0,
    ),
    R(
        "grafana-cloud-api-token",
        B + r"(?P<s>glc_[A-Za-z0-9+/]{32,400}={0,3})" + E64,
        ("glc_",),
        entropy=3.0,
    ),
    R(
        "grafana-service-account-token",
        B + r"(?P<s>glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})" + E,
        ("glsa_",),
        entropy=3.0,
    ),
    R(
        "new-relic-key",
        B + r"(?P<s>NR(?:AK|AA|II|JS)-[a-z0-9\-]{19,32})" + E,
        ("nrak-", "nraa-", "nrii-", "nrjs-"),
        flags=IC,
        entropy=2.5,
    ),
    R(
        "sentry-org-token",
        B + r"(?P<s>sntrys_eyJpYXQiO[a-zA-Z0-9+/]{10,300}={0,2}_[a-zA-Z0-9+/]{43})" + E64,
        ("sntrys_",),
        entropy=4.5,
    ),
    R("sentry-user-token", B + r"(?P<s>sntryu_[a-f0-9]{64})" + E, ("sntryu_",), entropy=3.5),
    R("atlassian-api-token", B + r"(?P<s>ATATT3[A-Za-z0-9_\-=]{186})" + E, ("atatt3",)),
    R("atlassian-api-token", B + r"(?P<s>ATCTT3[A-Za-z0-9_\-=]{186})" + E, ("atctt3",)),
    R(
        "1password-secret-key",
        r"\b(?P<s>A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})\b",
        ("a3-",),
        entropy=3.8,
    ),
    R(
        "1password-service-account-token",
        B + r"(?P<s>ops_eyJ[a-zA-Z0-9+/]{250,}={0,3})",
        ("ops_",),
        entropy=4.0,
    ),
    R(
        "age-secret-key",
        r"(?P<s>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})",
        ("age-secret-key-1",),
    ),
    R(
        "authress-access-key",
        B
        + r"(?P<s>(?:sc|ext|scauth|authress)_[a-zA-Z0-9]{5,30}\.[a-zA-Z0-9]{4,6}"
        + r"\.acc[_-][a-zA-Z0-9-]{10,32}\.[a-zA-Z0-9+/_=-]{30,120})",
        ("sc_", "ext_", "scauth_", "authress_"),
    ),
    R(
        "clickhouse-cloud-api-secret-key",
        B + r"(?P<s>4b1d[A-Za-z0-9]{38})" + E,
        ("4b1d",),
        entropy=3.0,
    ),
    R("defined-networking-api-token", B + r"(?P<s>dnkey-[\w=\-]{26}-[\w=\-]{52})" + E, ("dnkey-",)),
    R("temporal-api-key", B + r"(?P<s>tmprl_[A-Za-z0-9]{32}_[A-Za-z0-9]{32})" + E, ("tmprl_",)),
    R(
        "supabase-key",
        B + r"(?P<s>sb_secret_[A-Za-z0-9_\-]{20,})" + E,
        ("sb_secret_",),
        entropy=3.0,
    ),
    R(
        "vercel-token",
        B + r"(?P<s>vc[pkiar]_[A-Za-z0-9]{56})" + E,
        ("vcp_", "vck_", "vci_", "vca_", "vcr_"),
        entropy=3.5,
    ),
    R(
        "netlify-token",
        B + r"(?P<s>nf[pcu]_[A-Za-z0-9]{36,40})" + E,
        ("nfp_", "nfc_", "nfu_"),
        entropy=3.5,
    ),
    R(
        "linode-token",
        r"(?i:linode)[\w.\-]{0,20}\s*[:=]\s*['\"]?(?P<s>[a-f0-9]{64})" + E,
        ("linode",),
    ),
    # ---------------------------------------------------------------- AI providers
    R(
        "anthropic-api-key",
        B + r"(?P<s>sk-ant-(?:api03|admin01|oat01|ort01|sid01)-[\w\-]{93}AA)" + E,
        ("sk-ant-",),
    ),
    R(
        "openai-api-key",
        B
        + r"(?P<s>sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,200}"
        + r"|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})"
        + E,
        ("sk-",),
        entropy=3.0,
    ),
    R(
        "ai-api-key",
        B + r"(?P<s>sk-(?:or-v1-)?[A-Za-z0-9]{32,100})" + E,
        ("sk-",),
        entropy=3.5,
        check=_mixed_digit,
    ),
    R(
        "huggingface-access-token",
        B + r"(?P<s>hf_[A-Za-z]{34})" + E,
        ("hf_",),
        entropy=3.0,
        check=_mixed_case,
    ),
    R(
        "huggingface-org-token",
        B + r"(?P<s>api_org_[A-Za-z]{34})" + E,
        ("api_org_",),
        entropy=3.0,
        check=_mixed_case,
    ),
    R("perplexity-api-key", B + r"(?P<s>pplx-[A-Za-z0-9]{48})" + E, ("pplx-",), entropy=4.0),
    R("groq-api-key", B + r"(?P<s>gsk_[A-Za-z0-9]{52})" + E, ("gsk_",), entropy=3.5),
    R("replicate-api-token", B + r"(?P<s>r8_[A-Za-z0-9]{37})" + E, ("r8_",), entropy=3.5),
    R("xai-api-key", B + r"(?P<s>xai-[A-Za-z0-9]{80})" + E, ("xai-",), entropy=3.5),
    R("langsmith-api-key", B + r"(?P<s>lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10})" + E, ("lsv2_",)),
    R(
        "cohere-api-key",
        r"(?i:cohere|co_api_key)[\w.\-]{0,20}['\"]?\s*[:=]\s*['\"]?(?P<s>[a-zA-Z0-9]{40})" + E,
        ("cohere", "co_api_key"),
        entropy=4.0,
    ),
    # ---------------------------------------------------------------- VCS hosts and CI
    R(
        "github-token",
        B + r"(?P<s>gh[pousr]_[A-Za-z0-9]{36,255})" + E,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        entropy=3.0,
    ),
    R(
        "github-fine-grained-pat",
        B + r"(?P<s>github_pat_\w{60,255})" + E,
        ("github_pat_",),
        entropy=3.0,
    ),
    R(
        "gitlab-token",
        B
        + r"(?P<s>gl(?:pat|dt|ptt|rt|rtr|cbt|ffct|ft|imt|agent|oas|soat|wt|cit)-[\w\-]{20,300}"
        + r"(?:\.[0-9a-z]{2}[0-9a-z]{7})?(?:\.[\w\-]{2,20})?)"
        + E,
        (
            "glpat-",
            "gldt-",
            "glptt-",
            "glrt-",
            "glrtr-",
            "glcbt-",
            "glffct-",
            "glft-",
            "glimt-",
            "glagent-",
            "gloas-",
            "glsoat-",
            "glwt-",
            "glcit-",
        ),
        entropy=3.0,
    ),
    R("gitlab-rrt", B + r"(?P<s>GR1348941[\w-]{20,40})" + E, ("gr1348941",), entropy=3.0),
    R("gitlab-session-cookie", r"_gitlab_session=(?P<s>[0-9a-z]{32})" + E, ("_gitlab_session=",)),
    R("bitbucket-app-password", B + r"(?P<s>ATBB[A-Za-z0-9_=.\-]{32})" + E, ("atbb",), entropy=3.5),
    R("circleci-token", B + r"(?P<s>CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40})" + E, ("ccipat_",)),
    R("docker-hub-token", B + r"(?P<s>dckr_(?:pat|oat)_[\w-]{27,})" + E, ("dckr_",)),
    R(
        "sourcegraph-access-token",
        r"(?<![\w\-])(?P<s>sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}|sgph_[\w-]{40,})"
        + E,
        ("sgp_", "sgph_"),
        entropy=3.0,
        check=lambda v: "local" not in v and not v.isalpha(),
    ),
    # ---------------------------------------------------------------- chat and messaging
    R(
        "slack-token",
        B + r"(?P<s>xox[bpaors]-(?:\d+-){0,4}[A-Za-z0-9]{8,})(?![\w\-#*])",
        ("xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxr-", "xoxs-"),
        check=_slack_tail,
    ),
    R(
        "slack-config-token",
        B + r"(?P<s>xoxe\.xox[bp]-1-[A-Za-z0-9]{50,}|xoxe-1-[A-Za-z0-9]{50,})" + E,
        ("xoxe",),
        flags=IC,
        entropy=3.0,
    ),
    R("slack-config-token", B + r"(?P<s>xoxe-\d{6,}-\d{6,}-\d{6,}-[a-f0-9]{20,})" + E, ("xoxe-",)),
    R("slack-app-token", B + r"(?P<s>xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)" + E, ("xapp-",), flags=IC),
    R(
        "slack-webhook-url",
        r"(?P<s>(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}|(?:https?://)?hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{20,})",
        ("hooks.slack.com",),
        back=8,
        ahead=160,
    ),
    R(
        "discord-webhook",
        r"(?P<s>https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{60,})",
        ("discord",),
        back=16,
        ahead=300,
    ),
    R(
        "discord-bot-token",
        r"(?<![\w\-])(?P<s>[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38})(?![\w\-])",
        (),
        check=discord_token_ok,
        shape=("mno", rb"[a-z0-9_\-]{23,27}\.[a-z0-9_\-]{6}\.[a-z0-9_\-]{27}"),
    ),
    R(
        "twilio-api-key",
        B + r"(?P<s>SK[0-9a-fA-F]{32})" + E,
        (),
        check=_hex_mixed,
        shape=("s", rb"k[0-9a-f]{32}(?![0-9a-z_\-])"),
    ),
    R(
        "twilio-account-sid",
        B + r"(?P<s>AC[0-9a-fA-F]{32})" + E,
        (),
        check=_hex_mixed,
        shape=("a", rb"c[0-9a-f]{32}(?![0-9a-z_\-])"),
    ),
    R(
        "telegram-bot-token",
        r"(?<![\w:])(?P<s>\d{5,16}:A[\w\-]{34})" + E,
        (":A",),
        back=17,
        ahead=48,
        inside=True,
    ),
    R(
        "microsoft-teams-webhook",
        r"(?P<s>https://[a-z0-9\-]+\.webhook\.office\.com/webhookb2/[a-z0-9\-]+@[a-z0-9\-]+/IncomingWebhook/[a-z0-9]+/[a-z0-9\-]+)",
        ("webhookb2",),
        back=100,
        ahead=400,
        flags=IC,
    ),
    R("twitter-bearer-token", r"(?P<s>A{22}[A-Za-z0-9%]{60,})" + E, ("aaaaaaaaaaaaaaaaaaaaaa",)),
    R(
        "facebook-page-token",
        B + r"(?P<s>EAA[MC][A-Za-z0-9]{100,})" + E,
        ("eaam", "eaac"),
        entropy=4.0,
    ),
    R(
        "zoom-token",
        r"(?i:zoom)[\w.\-]{0,20}['\"]?\s*[:=]\s*['\"]?(?P<s>eyJ[\w\-.]{50,})",
        ("zoom",),
    ),
    # ---------------------------------------------------------------- payment and commerce
    R(
        "stripe-key",
        B + r"(?P<s>(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,247})" + E,
        ("sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_"),
        entropy=2.0,
    ),
    R(
        "stripe-webhook-secret",
        B + r"(?P<s>whsec_[A-Za-z0-9+/]{32,})" + E,
        ("whsec_",),
        entropy=3.0,
    ),
    R(
        "square-token",
        B + r"(?P<s>sq0(?:atp|csp|idp)-[\w\-]{22,43}|EAAA[\w\-]{60})" + E,
        ("sq0atp-", "sq0csp-", "sq0idp-", "eaaa"),
        entropy=3.0,
    ),
    R(
        "braintree-token",
        r"(?P<s>access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32})",
        ("access_token$",),
    ),
    R(
        "flutterwave-key",
        B + r"(?P<s>FLW(?:PUBK|SECK)_TEST-[a-h0-9]{12,32}(?:-X)?)",
        ("flwpubk_test-", "flwseck_test-"),
    ),
    R(
        "flutterwave-key",
        B + r"(?P<s>FLWSECK-[a-h0-9]{32}-X|FLWPUBK-[a-h0-9]{32}-X)",
        ("flwseck-", "flwpubk-"),
    ),
    R(
        "shopify-token",
        B + r"(?P<s>shp(?:at|ca|pa|ss|tka)_[a-fA-F0-9]{32})" + E,
        ("shpat_", "shpca_", "shppa_", "shpss_", "shptka_"),
    ),
    R(
        "plaid-api-token",
        B + r"(?P<s>access-(?:sandbox|development|production)-" + UUID + ")" + E,
        ("access-sandbox-", "access-development-", "access-production-"),
    ),
    R("razorpay-key", B + r"(?P<s>rzp_(?:live|test)_[A-Za-z0-9]{14})" + E, ("rzp_",), entropy=3.0),
    R("duffel-api-token", B + r"(?P<s>duffel_(?:test|live)_[\w=\-]{43})" + E, ("duffel_",)),
    R(
        "easypost-api-token",
        B + r"(?P<s>EZ[AT]K[a-zA-Z0-9]{54})" + E,
        ("ezak", "eztk"),
        entropy=3.5,
    ),
    R("shippo-api-token", B + r"(?P<s>shippo_(?:live|test)_[a-fA-F0-9]{40})" + E, ("shippo_",)),
    R(
        "gocardless-api-token",
        r"(?i:gocardless)[\s\S]{0,60}?(?P<s>live_[\w=\-]{40})" + E,
        ("gocardless",),
    ),
    R(
        "adyen-api-key",
        B + r"(?P<s>AQE[a-z0-9]{2}[A-Za-z0-9+/]{60,}={0,2})" + E64,
        ("aqe",),
        entropy=4.5,
    ),
    # ---------------------------------------------------------------- package registries
    R("npm-access-token", B + r"(?P<s>npm_[A-Za-z0-9]{36})" + E, ("npm_",), entropy=2.0),
    R("pypi-upload-token", B + r"(?P<s>pypi-AgE[IN][A-Za-z0-9\-_]{50,})" + E, ("pypi-age",)),
    R("rubygems-api-token", B + r"(?P<s>rubygems_[a-f0-9]{48})" + E, ("rubygems_",)),
    R("clojars-api-token", r"(?i)\b(?P<s>CLOJARS_[a-z0-9]{60})" + E, ("clojars_",), entropy=2.0),
    R("nuget-api-key", B + r"(?P<s>oy2[a-z0-9]{43})" + E, ("oy2",), entropy=3.5),
    R(
        "crates-io-token",
        B + r"(?P<s>cio[a-zA-Z0-9]{32})" + E,
        ("cio",),
        entropy=4.0,
        check=_mixed_case,
    ),
    R("artifactory-api-key", B + r"(?P<s>AKCp[A-Za-z0-9]{69})" + E, ("akcp",), entropy=4.5),
    R(
        "artifactory-reference-token",
        B + r"(?P<s>cmVmd[A-Za-z0-9]{59})" + E,
        ("cmvmd",),
        entropy=4.5,
    ),
    R(
        "jfrog-password",
        r"(?i:jfrog)[\w.\-]{0,30}(?i:password|token|apikey)\s*[:=]\s*['\"]?(?P<s>[A-Za-z0-9]{64,73})"
        + E,
        ("jfrog",),
        entropy=3.0,
    ),
    R("readme-api-token", B + r"(?P<s>rdme_[a-z0-9]{70})" + E, ("rdme_",)),
    R("postman-api-token", B + r"(?P<s>PMAK-[a-f0-9]{24}-[a-f0-9]{34})" + E, ("pmak-",), flags=IC),
    R(
        "hex-pm-key",
        B + r"(?P<s>hex_[A-Za-z0-9]{32,})" + E,
        ("hex_",),
        entropy=3.5,
        check=_mixed_digit,
    ),
    # ---------------------------------------------------------------- SaaS
    R(
        "sendgrid-api-token",
        B + r"(?P<s>SG\.[\w=\-]{20,24}\.[\w=\-]{39,50}|SG\.[\w=\-.]{66})" + E,
        ("sg.",),
        entropy=2.0,
    ),
    R(
        "sendinblue-api-token",
        B + r"(?P<s>x(?:keysib|smtpsib)-[a-f0-9]{64}-[a-z0-9]{16})" + E,
        ("xkeysib-", "xsmtpsib-"),
    ),
    R(
        "mailchimp-api-key",
        r"(?<![0-9A-Za-z])(?P<s>[0-9a-f]{32}-us\d{1,2})(?![\w\-])",
        ("-us",),
        back=33,
        ahead=12,
        inside=True,
        entropy=3.0,
    ),
    R("mailgun-key", B + r"(?P<s>(?:pub)?key-[a-f0-9]{32})" + E, ("key-",), entropy=3.0),
    R(
        "linear-api-key",
        B + r"(?P<s>lin_(?:api|oauth)_[a-zA-Z0-9]{40})" + E,
        ("lin_api_", "lin_oauth_"),
    ),
    R("notion-api-token", B + r"(?P<s>ntn_[0-9]{11}[A-Za-z0-9]{35})" + E, ("ntn_",), entropy=4.0),
    R("notion-api-token", B + r"(?P<s>secret_[A-Za-z0-9]{43})" + E, ("secret_",), entropy=4.0),
    R(
        "hubspot-pat",
        B
        + r"(?P<s>pat-(?:na|eu)\d-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})"
        + E,
        ("pat-na", "pat-eu"),
    ),
    R("typeform-api-token", B + r"(?P<s>tfp_[\w\-.=]{59})" + E, ("tfp_",)),
    R("intra42-client-secret", B + r"(?P<s>s-s4t2(?:ud|af)-[a-f0-9]{64})" + E, ("s-s4t2",)),
    R("frameio-api-token", B + r"(?P<s>fio-u-[\w=\-]{64})" + E, ("fio-u-",)),
    R("adobe-client-secret", B + r"(?P<s>p8e-[a-zA-Z0-9]{32})" + E, ("p8e-",), entropy=2.0),
    R(
        "mapbox-api-token",
        B + r"(?P<s>(?:pk|sk|tk)\.[a-z0-9]{60}\.[a-z0-9]{22})" + E,
        ("pk.", "sk.", "tk."),
        flags=IC,
    ),
    R(
        "mapbox-api-token",
        B + r"(?P<s>(?:sk|tk)\.eyJ[\w\-]{20,}\.[\w\-]{20,})" + E,
        ("sk.eyj", "tk.eyj"),
    ),
    R("contentful-token", B + r"(?P<s>CFPAT-[\w\-]{43})" + E, ("cfpat-",)),
    R(
        "sidekiq-secret",
        r"(?i:BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM)['\"]?\s*(?:[:=]|:=)\s*['\"]?(?P<s>[a-f0-9]{8}:[a-f0-9]{8})"
        + E,
        ("bundle_enterprise__contribsys__com", "bundle_gems__contribsys__com"),
    ),
    R(
        "pagerduty-token",
        r"(?i:pagerduty|pd_token)[\w.\-]{0,20}['\"]?\s*[:=]\s*['\"]?(?P<s>[\w+\-]{20})" + E,
        ("pagerduty", "pd_token"),
        entropy=3.5,
    ),
    R(
        "okta-token",
        r"(?i:okta)[\w.\-]{0,30}['\"]?\s*(?:[:=]|=>)\s*['\"]?(?P<s>00[\w=\-]{40})" + E,
        ("okta",),
    ),
    R("jwt-base64", B + r"(?P<s>ZXlK[A-Za-z0-9+/]{60,}={0,2})" + E64, ("zxlk",), entropy=4.0),
    # ---------------------------------------------------------------- wallets (personal data)
    R(
        "bitcoin-address",
        r"(?<![\w\-])(?P<s>[13][1-9A-HJ-NP-Za-km-z]{24,33})(?![\w\-])",
        (),
        check=bitcoin_base58_ok,
        level=PII,
        shape=("13", rb"[1-9a-z]{24,33}(?![0-9a-z_\-])"),
    ),
    R(
        "bitcoin-address",
        r"(?<![\w\-])(?P<s>(?:bc1|BC1)[02-9ac-hj-np-zAC-HJ-NP-Z]{8,87})(?![\w\-])",
        ("bc1",),
        check=segwit_address_ok,
        level=PII,
    ),
)

"""Which tools take a credential on their command line, and how: data only.

Each row names tools, the rule their findings are named by, and their credential
options. An option is written `name:binding[/form]`:

* binding, how the value is attached: `n` the next word (`-w S3cret`), `g` glued to the
  option (`-pS3cret`), `e` after `=` in the same word (`--password=S3cret`), `c` after
  `:` (`/p:S3cret`); several letters allow each (`ne`: `--password X` or `=X`);
* form, where the secret sits in the value: nothing, the whole value; `pass:` after
  OpenSSL's `pass:` (not `env:`, `file:`, `fd:`, `stdin`); `%`, `,` or `:` after the
  first of these (`user%pass`, `user,pass`, `user:pass`); `conn`, `user/pass@db`;
  `conn:`, `[domain/]user:pass@host`; `kv`, a `key=value` whose key names a secret
  (`-Dnexus.password=…`); `kv*`, any key but a plain one (`username`, `host`, …: in a
  Kubernetes or Vault secret every value is one); `kvs`, a comma list of those
  (`username=u,password=p`); `conninfo`, a blank-separated list (`host=h password=p`).

A row may apply only after a subcommand (`sub`: `docker login`, `vault kv put`; a
trailing `*` matches any rest of a word, `http-basic.*`) and may name a positional
argument as the secret (`position`, counted after the subcommand; `*` every
positional, for the `kv` forms), possibly only when a flag is given (`needs`: `-b` for
`htpasswd`, with `-n` moving it one place, `position_with`). `values` lists the tool's
other options that take a value (so they are not counted as positionals; a letter ends
a short cluster: `htpasswd -bBC 10`), `options_end` says the tool's options stop at its
first positional (what `sshpass` runs has options of its own), `windows` that `/word`
is an option (`net user ana /delete`).

Options not in the table go to the general rule (`commands.py`): a value after an option
whose name says password, secret, token, key or auth, or `-p` after a `login`
subcommand of a tool not listed here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .validators import words

MYSQL = "mysql-password"
REDIS = "redis-cli-password"
SSHPASS = "sshpass-password"
HTPASSWD = "htpasswd-password"
CURL = "curl-auth-user"
DB = "db-password"
ARCHIVE = "archive-password"
KEYSTORE = "keystore-password"
REGISTRY = "registry-password"
SHARE = "share-password"
CLOUD = "cloud-password"
LITERAL = "secret-literal"
CONNECT = "connect-string-password"
ADD_USER = "add-user-password"
# Rules named before issue 42 keep the priority of the structural rules.
OLD_RULES = (MYSQL, REDIS, SSHPASS, HTPASSWD, CURL)
NEW_RULES = (DB, ARCHIVE, KEYSTORE, REGISTRY, SHARE, CLOUD, LITERAL, CONNECT, ADD_USER)


@dataclass(frozen=True, slots=True)
class Opt:
    """How one option takes its value, and where the secret sits in it."""

    bind: str
    form: str = ""


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool's (or subcommand's) credential options and positional secret."""

    rule: str
    options: dict[str, Opt] = field(default_factory=dict)
    sub: tuple[str, ...] = ()
    position: int | str = 0
    form: str = ""
    needs: str = ""
    position_with: tuple[str, int] = ("", 0)
    values: frozenset[str] = frozenset()
    options_end: bool = False
    windows: bool = False  # `/add`, `/domain:x` are options


def _opts(spec: str) -> dict[str, Opt]:
    out: dict[str, Opt] = {}
    for item in spec.split():
        cut = item.find(":", 1)
        name, how = (item[:cut], item[cut + 1 :]) if cut > 0 else (item, "n")
        bind, _, form = how.partition("/")
        out[name] = Opt(bind or "n", form)
    return out


_ROWS: list[tuple[str, Tool]] = []


def _row(names: str, rule: str, opts: str = "", **kw: object) -> None:
    sub = kw.pop("sub", "")
    values = kw.pop("values", "")
    tool = Tool(
        rule,
        _opts(opts),
        sub=tuple(str(sub).split()),
        values=frozenset(str(values).split()),
        **kw,  # type: ignore[arg-type]
    )
    for name in names.split():
        _ROWS.append((name, tool))


# ----------------------------------------------------------------------------- databases

_row(
    "mysql mysqldump mysqladmin mysqlimport mysqlcheck mysqlshow mysqlpump mysqlslap"
    " mysqlbinlog mysqlsh mariadb mariadb-dump mariadb-admin mariadb-import mariadb-check"
    " mariadb-show mariadb-slap mariadb-binlog mariadb-backup mariabackup",
    MYSQL,
    # `-p X` (a blank) is MySQL's prompt and `X` the database; `-P` is the port
    "-p:g --password:e --pass:e",
)
_row("redis-cli keydb-cli valkey-cli", REDIS, "-a --pass:ne")
_row(
    "mongo mongosh mongodump mongorestore mongoexport mongoimport mongostat mongotop mongofiles",
    DB,
    "-p --password:ne",
)
_row("sqlcmd bcp osql", DB, "-P:ng")
_row("isql", DB, "-P:ng", position=3)  # Sybase `-P`; unixODBC `isql DSN user password`
_row("cqlsh cypher-shell couchbase-cli rabbitmqadmin", DB, "-p --password:ne")
_row("rabbitmqadmin", DB, position="*", form="kv")  # `declare user name=u password=p`
_row("clickhouse-client clickhouse", DB, "--password:ne")
_row("influx", DB, "-password --password:ne")
_row("influx", DB, "-p", sub="user create")
_row("vsql", DB, "-w --password:ne")
_row("hdbsql", DB, "-p")
_row("nzsql", DB, "-pw")
_row("db2", DB, "using")  # `db2 connect to db user u using p`
_row(
    "psql pg_dump pg_dumpall pg_restore pg_basebackup pgbench pg_isready createdb dropdb"
    " vacuumdb reindexdb clusterdb",
    DB,
    "-d:n/conninfo --dbname:ne/conninfo",
    position="*",
    form="conninfo",
)
_row("etcdctl", DB, "--password:ne --user:ne/:")
_row("mosquitto_pub mosquitto_sub mosquitto_rr", DB, "-P --pw:ne")

# ----------------------------------------------------------------------------- archives

_row("7z 7za 7zr 7zz", ARCHIVE, "-p:g")  # `-p` alone prompts
_row("zip", ARCHIVE, "-P --password:ne")
_row("unzip", ARCHIVE, "-P")  # `-p` is "extract to a pipe"
_row("rar unrar winrar", ARCHIVE, "-p:g -hp:g")  # `-p-`: no password
_row("bsdtar", ARCHIVE, "--passphrase:ne")
_row("unar lsar", ARCHIVE, "-p -password")
_row("aescrypt", ARCHIVE, "-p")
_row("ccrypt", ARCHIVE, "-K --key:ne")

# ----------------------------------------------------------------------------- key stores, crypto

_row(
    "keytool",
    KEYSTORE,
    "-storepass -keypass -srcstorepass -deststorepass -srckeypass -destkeypass -new",
)
_row("jarsigner", KEYSTORE, "-storepass -keypass")
_row("apksigner", KEYSTORE, "--ks-pass:ne/pass: --key-pass:ne/pass:")
_row("openssl", KEYSTORE, "-passin:n/pass: -passout:n/pass: -pass:n/pass: -k -K")  # -K: hex key
_row("openssl", KEYSTORE, sub="passwd", position=1, values="-salt -in")
_row("gpg gpg2", KEYSTORE, "--passphrase:ne")
_row("ssh-keygen", KEYSTORE, "-N -P")  # new / old passphrase
_row("pk12util", KEYSTORE, "-W -K")
_row("orapki", KEYSTORE, "-pwd")
_row("security", KEYSTORE, "-p", sub="unlock-keychain")  # macOS
_row("security", KEYSTORE, "-p", sub="create-keychain")
_row("security", KEYSTORE, "-P", sub="import")
_row("security", KEYSTORE, "-w", sub="add-generic-password")
_row("security", KEYSTORE, "-w", sub="add-internet-password")

# ----------------------------------------------------------------------------- registries, builds

_row(
    "docker podman nerdctl buildah skopeo finch oras",
    REGISTRY,
    "-p --password:ne",
    sub="login",
)
_row("skopeo", REGISTRY, "--creds:ne/: --src-creds:ne/: --dest-creds:ne/:")
_row("helm", REGISTRY, "-p --password:ne", sub="registry login")
_row("helm", REGISTRY, "--password:ne")
_row("crane", REGISTRY, "-p --password:ne", sub="auth login")
_row("regctl", REGISTRY, "-p --pass:ne", sub="registry login")
_row("npm-cli-login", REGISTRY, "-p --pass:ne")
_row("twine", REGISTRY, "-p --password:ne")
_row("poetry", REGISTRY, "-p --password:ne", sub="publish")
_row("poetry", REGISTRY, sub="config http-basic.*", position=2)
_row("poetry", REGISTRY, sub="config pypi-token.*", position=1)
_row("composer", REGISTRY, sub="config http-basic.*", position=2)
_row("composer", REGISTRY, sub="config github-oauth.*", position=1)
_row("cargo", REGISTRY, sub="login", position=1)
_row("uv", REGISTRY, "-p --password:ne -t --token:ne", sub="publish")
_row("hatch", REGISTRY, "-a --auth:ne", sub="publish")
_row("mvn mvnw ant sbt java", REGISTRY, "-D:g/kv")
_row("gradle gradlew", REGISTRY, "-D:g/kv -P:g/kv")
_row("dotnet", REGISTRY, "-p --password:ne", sub="nuget add source")
_row("dotnet", REGISTRY, "-p --password:ne", sub="nuget update source")
_row("dotnet", REGISTRY, "-k --api-key:ne", sub="nuget push")
_row("nuget", REGISTRY, "-Password -password", sub="sources")
_row("nuget", REGISTRY, "-ApiKey -apikey -k", sub="push")
_row("nuget", REGISTRY, sub="setapikey", position=1)
_row("gh", REGISTRY, "-b --body:ne", sub="secret set")

# ----------------------------------------------------------------------------- directories, shares

_row(
    "smbclient rpcclient smbcacls smbget smbtree smbcquotas",
    SHARE,
    "-U:n/% --user:ne/% --password:ne",
)
_row("net", SHARE, "-U:n/% --user:ne/%")
_row("smbmap crackmapexec netexec nxc enum4linux evil-winrm", SHARE, "-p --password:ne")
_row("mount mount.cifs mount.smb3", SHARE, "-o:n/kvs")
_row(
    "ldapsearch ldapmodify ldapadd ldapdelete ldapmodrdn ldapcompare ldapwhoami ldapexop",
    SHARE,
    "-w",
)
_row("ldappasswd", SHARE, "-w -s -a")
_row("lftp", SHARE, "-u:n/,")
_row("ncftp ncftpput ncftpget ncftpls", SHARE, "-p")
_row("curl", CURL, "-u:ng/: --user:ne/:")  # `-u user:` alone: an API key as the user
_row("curl", SHARE, "-U:n/: --proxy-user:ne/: --oauth2-bearer:ne")
_row("wget", SHARE, "--password:ne --http-password:ne --ftp-password:ne --proxy-password:ne")
_row("svn", SHARE, "--password:ne")
_row("rdesktop", SHARE, "-p")
_row("xfreerdp wlfreerdp sdl-freerdp", SHARE, "/p:c /password:c")
_row("plink pscp psftp", SHARE, "-pw")
_row("sshpass", SSHPASS, "-p:ng", values="-f -d -P", options_end=True)
_row("ipmitool", SHARE, "-P")
_row(
    "snmpwalk snmpget snmpset snmpbulkwalk snmpbulkget snmpgetnext snmptable snmptrap",
    SHARE,
    "-A -X",
)
_row("x11vnc", SHARE, "-passwd")
_row("nmcli", SHARE, "password wifi-sec.psk")
_row("wpa_passphrase", SHARE, position=2)

# ----------------------------------------------------------------------------- clouds

_row("az", CLOUD, "-p --password:ne", sub="login")
_row("az", CLOUD, "-p --password:ne", sub="acr login")
_row("az", CLOUD, "--value:ne", sub="keyvault secret set")
_row("oc", CLOUD, "-p --password:ne", sub="login")
_row("cf", CLOUD, "-p", sub="login")
_row("cf", CLOUD, sub="auth", position=2)
_row("ibmcloud ic", CLOUD, "-p --apikey:ne", sub="login")
_row("doctl", CLOUD, "-t --access-token:ne", sub="auth init")
_row("aws", CLOUD, "--value:ne", sub="ssm put-parameter", needs="SecureString")
_row("pulumi", CLOUD, sub="config set", position=2, needs="--secret")
_row("terraform tofu terragrunt", CLOUD, "-var:ne/kv")
_row("ansible ansible-playbook", CLOUD, "-e:n/conninfo --extra-vars:ne/conninfo")

# ----------------------------------------------------------------------------- Kubernetes, Vault

_row("kubectl oc", LITERAL, "--from-literal:ne/kv*", sub="create secret")
_row("kubectl oc", LITERAL, "--from-literal:ne/kv")
_row("helm", LITERAL, "--set:ne/kvs --set-string:ne/kvs")
_row("vault", LITERAL, sub="kv put", position="*", form="kv*")
_row("vault", LITERAL, sub="kv patch", position="*", form="kv*")
_row("vault", LITERAL, sub="write", position="*", form="kv")
_row("vault", LITERAL, sub="login", position="*", form="kv")
_row("vault", LITERAL, sub="login", position=1, form="token")
_row("vault", LITERAL, sub="operator unseal", position=1)

# ----------------------------------------------------------------------------- connect strings

_row(
    "sqlplus expdp impdp dgmgrl sqlldr",
    CONNECT,
    "userid:e/conn",
    position=1,
    form="conn",
    values="-M -R",
)
_row("rman", CONNECT, "target:n/conn catalog:n/conn auxiliary:n/conn")
_row(
    "secretsdump psexec wmiexec smbexec atexec dcomexec mssqlclient getuserspns getnpusers"
    " gettgt getst lookupsid samrdump impacket-secretsdump impacket-psexec impacket-wmiexec"
    " impacket-smbexec impacket-mssqlclient impacket-getuserspns",
    CONNECT,
    position=1,
    form="conn:",
)
_row("psexec", SHARE, "-p")  # Sysinternals `psexec \\host -u u -p p`
_row("mysqlsh", CONNECT, "--uri:ne/conn:", position=1, form="conn:")

# ----------------------------------------------------------------------------- adding users

_row("htpasswd", HTPASSWD, position=3, needs="b", position_with=("n", 2), values="C r")
_row("mosquitto_passwd", ADD_USER, position=3, needs="b", values="H")
_row("rabbitmqctl", ADD_USER, sub="add_user", position=2)
_row("rabbitmqctl", ADD_USER, sub="change_password", position=2)
_row("rabbitmqctl", ADD_USER, sub="authenticate_user", position=2)
_row("useradd usermod adduser", ADD_USER, "-p --password:ne")
_row("net", ADD_USER, sub="user", position=2, windows=True)  # `net user name pass /add`
_row("ejabberdctl", ADD_USER, sub="register", position=3)
_row("ejabberdctl", ADD_USER, sub="change_password", position=3)
_row("prosodyctl", ADD_USER, sub="register", position=3)
_row("mc", ADD_USER, sub="admin user add", position=3)
_row("grafana-cli", ADD_USER, sub="admin reset-admin-password", position=1)
_row("samba-tool", ADD_USER, sub="user add", position=2)
_row("samba-tool", ADD_USER, sub="user create", position=2)
_row("ipmitool", ADD_USER, sub="user set password", position=2)
_row("airflow", ADD_USER, "-p --password:ne", sub="users create")
_row("addprinc", ADD_USER, "-pw")  # kadmin -q "addprinc -pw p user"

# Names also run with a suffix: Windows executables (`sqlcmd.exe`), impacket's scripts
# (`secretsdump.py`). Each is one more anchor, so only these.
SUFFIXED = {
    ".exe": words(
        """
        psexec plink pscp psftp sqlcmd bcp osql sqlplus expdp impdp sqlldr rman keytool
        jarsigner 7z 7za rar unrar winrar net nuget curl wget ssh-keygen openssl mysql
        mysqldump mongosh mongodump xfreerdp ipmitool gpg az gh docker kubectl helm vault
        """
    ),
    ".py": words(
        """
        secretsdump psexec wmiexec smbexec atexec dcomexec mssqlclient getuserspns
        getnpusers gettgt getst lookupsid samrdump
        """
    ),
}

TOOLS: dict[str, tuple[Tool, ...]] = {}
for _name, _tool in _ROWS:
    TOOLS[_name] = (*TOOLS.get(_name, ()), _tool)

# `kv*` keys that name no secret: their values are shown.
PLAIN_KEYS = words(
    """
    user username login host hostname port database db dbname name url uri endpoint
    address addr region email ttl max_ttl policies policy type path description role
    roles comment enabled id
    """
)

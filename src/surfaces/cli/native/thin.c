/*
 * The native thin client: what the launcher bin/quire runs for a command
 * naming `--vault` (docs/cli.md, "Native thin client"). It does what the
 * Node thin client (../thin.ts) does, without starting Node: it finds the
 * folder's daemon socket by the rule of ../../daemon/socket-path.ts, sends
 * the same `run` request (with `wire: "frames"`, so that the answer needs no
 * JSON reading here; protocol.ts, runFrames), prints what the daemon
 * answers and exits with its code. A warm call then costs a few
 * milliseconds instead of a Node start.
 *
 * Whatever it cannot settle the same way (no daemon, a stale socket, a
 * daemon leaving the call to the full command line, a path or argument
 * that is not UTF-8, an odd environment) it hands to `node bin/quire.js`
 * with the same arguments, having sent nothing or having been told the
 * daemon did nothing. When the daemon was asked, QUIRE_THIN_ASKED=1 tells
 * bin/quire.js not to ask it again; when nothing was sent, the Node thin
 * client runs as if launched directly (it finds no daemon either, at the
 * cost of a failed connect). Which commands a daemon answers is the daemon's rule (it
 * answers `fallback` to the others); this file only needs a first argument
 * that is a command and a `--vault DIR`.
 *
 * It finds the install by its own path, argv[0], which the launcher gives:
 * <root>/dist/surfaces/cli/native/thin. C99 and POSIX.1-2008 (XSI) only.
 */
#define _XOPEN_SOURCE 700 /* POSIX.1-2008 with realpath (XSI) */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* socket-path.ts SOCKET_PATH_LIMIT: longer socket paths do not fit sockaddr_un everywhere. */
#define SOCKET_PATH_LIMIT 100

static int g_argc;
static char **g_argv;

/* A growing byte buffer; running out of memory ends the process (exit 1, as Node would). */
typedef struct {
  char *data;
  size_t len, cap;
} buf;

static void buf_add(buf *b, const void *p, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (b->len + n + 1 > cap) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
      fputs("quire: out of memory\n", stderr);
      exit(1);
    }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
}

static void buf_str(buf *b, const char *s) { buf_add(b, s, strlen(s)); }

/* The install's file `rel` (from its root), by the path this program was run by. */
static char *install_file(const char *rel) {
  const char *self = g_argv[0];
  const char *slash = strrchr(self, '/');
  buf b = {0};
  if (!slash) return NULL; /* run by a bare name: not by the launcher */
  buf_add(&b, self, (size_t)(slash - self));
  buf_str(&b, "/../../../../");
  buf_str(&b, rel);
  return b.data;
}

/*
 * `node bin/quire.js` with the same arguments: what the Node thin client
 * does when it returns false. `asked`: the daemon answered that it leaves
 * the call (bin/quire.js then goes straight to the full command line).
 * Never returns.
 */
static void full_command_line(int asked) {
  char *js = install_file("bin/quire.js");
  char **args = calloc((size_t)g_argc + 2, sizeof *args);
  if (!js || !args) {
    fputs("quire: cannot find bin/quire.js\n", stderr);
    exit(2);
  }
  args[0] = "node";
  args[1] = js;
  for (int i = 1; i < g_argc; i++) args[i + 1] = g_argv[i];
  if (asked) setenv("QUIRE_THIN_ASKED", "1", 1);
  execvp("node", args);
  fprintf(stderr, "quire: cannot run node: %s\n", strerror(errno));
  exit(127);
}

/* Strict UTF-8 (no overlong forms, surrogates or code points past U+10FFFF): Node would read anything else otherwise. */
static int is_utf8(const unsigned char *s) {
  while (*s) {
    unsigned c = *s;
    int n;
    unsigned min;
    if (c < 0x80) {
      s++;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) n = 1, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) n = 2, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) n = 3, min = 0x10000;
    else return 0;
    unsigned cp = c & (0x3f >> n);
    for (int i = 1; i <= n; i++) {
      if ((s[i] & 0xc0) != 0x80) return 0;
      cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    s += n + 1;
  }
  return 1;
}

/* A JSON string as JSON.stringify writes it (the text is valid UTF-8, passed through). */
static void json_str(buf *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  buf_str(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
    switch (c) {
      case '"': esc[1] = '"'; break;
      case '\\': esc[1] = '\\'; break;
      case '\b': esc[1] = 'b'; break;
      case '\f': esc[1] = 'f'; break;
      case '\n': esc[1] = 'n'; break;
      case '\r': esc[1] = 'r'; break;
      case '\t': esc[1] = 't'; break;
      default:
        if (c < 0x20) {
          memcpy(esc + 1, "u00", 3);
          esc[4] = hex[c >> 4];
          esc[5] = hex[c & 15];
        }
    }
    if (esc[1]) buf_str(b, esc);
    else buf_add(b, s, 1);
  }
  buf_str(b, "\"");
}

/* path.join's normalisation of an absolute path: no empty, `.` or `..` segments (lexically, as Node does). */
static void normalize_abs(char *p) {
  char *out = p; /* p[0] == '/' */
  const char *in = p;
  while (*in) {
    while (*in == '/') in++;
    const char *seg = in;
    while (*in && *in != '/') in++;
    size_t n = (size_t)(in - seg);
    if (n == 0 || (n == 1 && seg[0] == '.')) continue;
    if (n == 2 && seg[0] == '.' && seg[1] == '.') {
      while (out > p && *--out != '/') {
      }
      continue;
    }
    *out++ = '/';
    memmove(out, seg, n);
    out += n;
  }
  if (out == p) *out++ = '/';
  *out = '\0';
}

/* socket-path.ts daemonRuntimeDir; NULL where the Node rule needs more than this reads (no HOME, a relative one). */
static char *runtime_dir(void) {
  const char *run = getenv("XDG_RUNTIME_DIR");
  const char *cache = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  buf b = {0};
  if (run && run[0] == '/') {
    buf_str(&b, run);
    buf_str(&b, "/quire");
  } else if (cache && cache[0] == '/') {
    buf_str(&b, cache);
    buf_str(&b, "/quire/run");
  } else if (home && home[0] == '/') {
    buf_str(&b, home);
    buf_str(&b, "/.cache/quire/run");
  } else return NULL;
  normalize_abs(b.data);
  return b.data;
}

/* socket-path.ts fnv1a64: FNV-1a (64 bits) of the bytes. */
static uint64_t fnv1a64(const char *s) {
  uint64_t h = 0xcbf29ce484222325u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3u;
  return h;
}

/* socket-path.ts buildId: dist/.built, trimmed; NULL when missing (bin/quire.js then says dist/ is missing). */
static char *build_id(void) {
  char *stamp = install_file("dist/.built");
  FILE *f = stamp ? fopen(stamp, "rb") : NULL;
  buf b = {0};
  char chunk[256];
  size_t n;
  if (!f) return NULL;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_add(&b, chunk, n);
  fclose(f);
  if (!b.data) return NULL;
  char *s = b.data, *e = b.data + b.len;
  while (s < e && strchr(" \t\n\v\f\r", *s)) s++;
  while (e > s && strchr(" \t\n\v\f\r", e[-1])) e--;
  *e = '\0';
  /* JS's trim() knows more white space than ASCII: with anything else in it, let Node read it. */
  for (char *c = s; c < e; c++)
    if ((unsigned char)*c >= 0x80 || *c == '\0') return NULL;
  return s;
}

/* getcwd(3) with a buffer that grows (POSIX leaves getcwd(NULL, 0) unspecified). */
static char *working_dir(void) {
  for (size_t size = 1024; size <= ((size_t)1 << 20); size *= 2) {
    char *p = malloc(size);
    if (!p) return NULL;
    if (getcwd(p, size)) return p;
    free(p);
    if (errno != ERANGE) return NULL;
  }
  return NULL;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        struct pollfd pfd = {fd, POLLOUT, 0};
        poll(&pfd, 1, -1);
        continue;
      }
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void broken(const char *message) {
  fprintf(stderr, "quire: %s\n", message);
  exit(1);
}

static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static int has_arg(const char *want) {
  for (int i = 1; i < g_argc; i++)
    if (strcmp(g_argv[i], want) == 0) return 1;
  return 0;
}

int main(int argc, char **argv) {
  g_argc = argc;
  g_argv = argv;
  /* thin.ts thinVault's shape: a command first, and the last `--vault` with its folder after it. */
  if (argc < 2 || argv[1][0] == '-') full_command_line(0);
  const char *off = getenv("QUIRE_DAEMON");
  if (off && strcmp(off, "off") == 0) full_command_line(0);
  int v = 0;
  for (int i = argc - 1; i > 1 && !v; i--)
    if (strcmp(argv[i], "--vault") == 0) v = i;
  if (v == 0 || v + 1 >= argc) full_command_line(0);

  char *vault = realpath(argv[v + 1], NULL);
  char *dir = runtime_dir();
  char *build = build_id();
  char *cwd = working_dir();
  const char *tz = getenv("TZ");
  if (!vault || !dir || !build || !cwd || !is_utf8((unsigned char *)vault) || !is_utf8((unsigned char *)cwd)) full_command_line(0);
  if (tz && !is_utf8((const unsigned char *)tz)) full_command_line(0);
  for (int i = 1; i < argc; i++)
    if (!is_utf8((unsigned char *)argv[i])) full_command_line(0);
  buf sock = {0};
  char name[32];
  snprintf(name, sizeof name, "/%016llx.sock", (unsigned long long)fnv1a64(vault));
  buf_str(&sock, dir);
  buf_str(&sock, name);
  struct sockaddr_un addr;
  if (sock.len > SOCKET_PATH_LIMIT || sock.len >= sizeof addr.sun_path) full_command_line(0);

  /* protocol.ts RunRequest, as thin.ts sends it, asking for frames. */
  buf req = {0};
  buf_str(&req, "{\"op\":\"run\",\"build\":");
  json_str(&req, build);
  buf_str(&req, ",\"argv\":[");
  for (int i = 1; i < argc; i++) {
    if (i > 1) buf_str(&req, ",");
    json_str(&req, argv[i]);
  }
  buf_str(&req, "],\"cwd\":");
  json_str(&req, cwd);
  buf_str(&req, ",\"tz\":");
  if (tz) json_str(&req, tz);
  else buf_str(&req, "null");
  buf_str(&req, ",\"wire\":\"frames\"}\n");

  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, sock.data, sock.len + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) full_command_line(0);
  /* Nobody answered on the socket (no daemon, a stale socket file): nothing was sent. */
  if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
    close(fd);
    full_command_line(0);
  }

  /* From here on the call may have been made: never again, whatever happens (thin.ts does the same). */
#ifdef MSG_NOSIGNAL
  const int flags = MSG_NOSIGNAL;
#else
  /* Writing to a daemon gone away must fail, not kill; the disposition is put back before printing or exec. */
  const int flags = 0;
  struct sigaction ignore, before;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &before);
#endif
  for (size_t sent = 0; sent < req.len;) {
    ssize_t w = send(fd, req.data + sent, req.len - sent, flags);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) broken(strerror(errno));
    sent += (size_t)w;
  }
#ifndef MSG_NOSIGNAL
  sigaction(SIGPIPE, &before, NULL);
#endif
  buf in = {0};
  char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) broken(strerror(errno));
    if (n == 0) break;
    buf_add(&in, chunk, (size_t)n);
  }
  close(fd);
  if (in.len == 0) broken("The vault daemon closed the connection without answering");
  /*
   * A JSON line: an answer not in frames, which a daemon of this build gives only when it did nothing
   * (a request it could not read, an error before running); thin.ts falls back on every `ok: false`.
   */
  if (in.data[0] == '{') {
    if (strncmp(in.data, "{\"ok\":false", 11) == 0) full_command_line(1);
    broken("The vault daemon answered in a form this client does not read");
  }

  /*
   * protocol.ts runFrames: frames of a kind byte, a 4-byte length and that many bytes. Either one
   * fallback frame (the daemon did nothing), or output frames (stdout, stderr) and one exit frame last.
   */
  const unsigned char *p = (const unsigned char *)in.data, *end = p + in.len;
  for (const unsigned char *q = p;;) {
    if (end - q < 5 || (size_t)(end - q - 5) < be32(q + 1)) broken("The vault daemon's answer was cut short");
    uint32_t n = be32(q + 1);
    int fine = q[0] == 'o' || q[0] == 'e' || (q[0] == 'x' && n == 4) || (q[0] == 'f' && q == p);
    const unsigned char *next = q + 5 + n;
    int last = q[0] == 'x' || q[0] == 'f';
    if (!fine || (last && next != end)) broken("The vault daemon answered in a form this client does not read");
    if (last) break;
    q = next;
  }
  if (p[0] == 'f') {
    if (has_arg("--verbose"))
      fprintf(stderr, "vault daemon: the running one left this call to the full command line (%.*s)\n", (int)be32(p + 1), (const char *)p + 5);
    full_command_line(1);
  }
  int code = 0;
  for (const unsigned char *q = p; q < end; q += 5 + be32(q + 1)) {
    const char *body = (const char *)q + 5;
    if (q[0] == 'x') code = (int)be32((const unsigned char *)body);
    else write_all(q[0] == 'o' ? 1 : 2, body, be32(q + 1));
  }
  return code & 0xff;
}

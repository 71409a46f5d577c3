# The spawner where a complete perl is at hand: the same service as spawner/spawner.ts, one perl process instead of a
# Node one that execs a perl launcher per job. Forked from here, a job costs a fork of this small process and the exec
# of its shell: about half the CPU of a start through the Node spawner and its launcher (docs/decisions/spawner.md).
# It speaks the protocol of mailbox/spawner-protocol.ts: an actor connects one socket per stream of the child and one
# control socket, each saying a first JSON line; once all of a request's have arrived, the child gets those very
# sockets as its stdio, and the control socket hears `spawned` (or `error`) and then `exit`. It never reads a job's
# output.
#
# Usage: perl spawner.pl <socket path> <nice steps> <group|session> <ready line> <longest line>
#   group:   each job is a process group of its own inside this session (one scheduling group for all jobs), its
#            command run <nice steps> below this process;
#   session: each job is a session of its own, at this process's priority.
# It prints the ready line once it listens, and exits when its stdin closes. A module it needs that is missing ends it
# before that line (a perl-base without Time::HiRes), and the runtime then starts the Node spawner instead.
use strict;
use warnings;
use Config;
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
use IO::Select;
use POSIX ();
use Socket qw(AF_UNIX SOCK_STREAM SOMAXCONN pack_sockaddr_un);
use Time::HiRes ();

# The protocol's JSON lines (decode_line, json_string): spawner/json-line.pl, beside this file.
my $here = __FILE__ =~ s{[^/]*\z}{}r;
require(($here =~ m{\A\.{0,2}/} ? $here : "./$here") . 'json-line.pl');

my ($socket_path, $nice_steps, $mode, $ready_line, $longest_line) = @ARGV;
die "usage: spawner.pl <socket path> <nice steps> <group|session> <ready line> <longest line>\n"
  unless defined $longest_line && ($mode eq 'group' || $mode eq 'session');

# A request whose connections have not all arrived by then is dropped: its actor gave up or died.
my $ASSEMBLY_TIMEOUT_S = 30;
# While children run, select wakes at least this often: a SIGCHLD that lands just before select is entered would
# otherwise be heard only with the next event.
my $REAP_EVERY_S = 0.2;

my @signal_names = split ' ', $Config{sig_name};
my $spawner_pid = $$;

# The terminal's signals are not for the spawner (Pi decides when the session ends, and then closes stdin); a control
# socket whose actor is gone must not end it either.
$SIG{INT} = 'IGNORE';
$SIG{PIPE} = 'IGNORE';
pipe(my $wake_read, my $wake_write) or die "pipe: $!";
for my $fh ($wake_read, $wake_write) {
  fcntl($fh, F_SETFL, fcntl($fh, F_GETFL, 0) | O_NONBLOCK) or die "fcntl: $!";
}
$SIG{CHLD} = sub { syswrite $wake_write, 'x' };

unlink $socket_path;
socket(my $server, AF_UNIX, SOCK_STREAM, 0) or die "socket: $!";
bind($server, pack_sockaddr_un($socket_path)) or die "bind: $!";
listen($server, SOMAXCONN) or die "listen: $!";
END { unlink $socket_path if defined $spawner_pid && $$ == $spawner_pid }

my $select = IO::Select->new($server, \*STDIN, $wake_read);
# By descriptor: connections whose first line has not arrived ({ fh, buffer, since }).
my %hellos;
# By spawn id: the connections of one request so far ({ request, control, streams, since }).
my %assemblies;
# By descriptor: control sockets of requests still assembling, whose close drops the request.
my %waiting_controls;
# By descriptor: the pipe on which a forked child says why its exec failed; its end of file says the exec happened.
my %exec_reports;
# By pid: children not yet reported ended ({ control, state: starting | spawned | failed, exit }).
my %children;

sub monotonic_ms { Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC()) * 1000 }

sub reply {
  my ($control, $line) = @_;
  utf8::encode($line);
  syswrite $control, "$line\n";
}

sub error_line { '{"type":"error","message":' . json_string($_[0]) . '}' }

sub drop_assembly {
  my ($spawn) = @_;
  my $assembly = delete $assemblies{$spawn} or return;
  if (my $control = $assembly->{control}) {
    delete $waiting_controls{fileno $control};
    $select->remove($control);
    close $control;
  }
  close $_ for values %{ $assembly->{streams} };
}

sub is_text { defined $_[0] && !ref $_[0] }

# A first line as the protocol has it (mailbox/spawner-protocol.ts, parseHello), or undef.
sub parse_hello {
  my ($line) = @_;
  my $hello = decode_line($line);
  return undef unless ref $hello eq 'HASH' && is_text($hello->{spawn}) && is_text($hello->{role});
  my $role = $hello->{role};
  return $hello if $role eq 'stdin' || $role eq 'stdout' || $role eq 'stderr';
  return undef unless $role eq 'control';
  return undef unless is_text($hello->{shell}) && is_text($hello->{command}) && is_text($hello->{cwd});
  return undef unless ref $hello->{env} eq 'HASH' && ref $hello->{stdin} eq 'SCALAR';
  for my $value (values %{ $hello->{env} }) { return undef unless is_text($value) }
  $hello->{stdin} = ${ $hello->{stdin} };
  return $hello;
}

sub attach {
  my ($hello, $fh) = @_;
  my $spawn = $hello->{spawn};
  my $assembly = $assemblies{$spawn} //= { request => undef, control => undef, streams => {}, since => time };
  if ($hello->{role} eq 'control') {
    return close $fh if defined $assembly->{control};
    $assembly->{request} = $hello;
    $assembly->{control} = $fh;
    $waiting_controls{fileno $fh} = $spawn;
    $select->add($fh);
  } else {
    return close $fh if defined $assembly->{streams}{ $hello->{role} };
    $assembly->{streams}{ $hello->{role} } = $fh;
  }
  my ($request, $control, $streams) = @$assembly{qw(request control streams)};
  return unless defined $request && $streams->{stdout} && $streams->{stderr} && (!$request->{stdin} || $streams->{stdin});
  delete $assemblies{$spawn};
  delete $waiting_controls{fileno $control};
  $select->remove($control);
  start($request, $control, $streams);
}

sub start {
  my ($request, $control, $streams) = @_;
  my $forked_at = monotonic_ms();
  my $fail = sub {
    close $_ for values %$streams;
    reply($control, error_line($_[0]));
    close $control;
  };
  # Close-on-exec, as every descriptor perl opens above 2: the exec closes the child's end.
  pipe(my $report_read, my $report_write) or return $fail->("pipe: $!");
  my $pid = fork;
  if (!defined $pid) {
    close $report_read;
    close $report_write;
    return $fail->("fork: $!");
  }
  run_child($request, $streams, $report_write) if $pid == 0;
  close $report_write;
  close $_ for values %$streams;
  $children{$pid} = { control => $control, state => 'starting', exit => undef, forked_at => $forked_at };
  $exec_reports{fileno $report_read} = { fh => $report_read, pid => $pid, said => '' };
  $select->add($report_read);
}

# In the child: its own group (or session), its directory, its stdio, its whole environment, then the exec. Whatever
# stops it is written on the report pipe, and the child exits as a shell would.
sub run_child {
  my ($request, $streams, $report) = @_;
  my $fail = sub {
    syswrite $report, $_[0];
    POSIX::_exit($_[1]);
  };
  # What this process set up for itself is not the job's: signal dispositions and the mask are inherited by exec.
  $SIG{$_} = 'DEFAULT' for qw(INT PIPE CHLD);
  POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new);
  if ($mode eq 'group') {
    setpgrp(0, 0) or $fail->("setpgid: $!", 126);
    my $nice = getpriority(0, 0) + $nice_steps;
    setpriority(0, 0, $nice > 19 ? 19 : $nice);
  } else {
    defined POSIX::setsid() or $fail->("setsid: $!", 126);
  }
  my ($shell, $command, $cwd) = map { my $bytes = $_; utf8::encode($bytes); $bytes } @$request{qw(shell command cwd)};
  chdir $cwd or $fail->("chdir $cwd: $!", 126);
  my $stdin = $streams->{stdin};
  if (!defined $stdin) {
    open($stdin, '<', '/dev/null') or $fail->("/dev/null: $!", 126);
  }
  for ([$stdin, 0], [$streams->{stdout}, 1], [$streams->{stderr}, 2]) {
    defined POSIX::dup2(fileno $_->[0], $_->[1]) or $fail->("dup2: $!", 126);
  }
  my $env = $request->{env};
  %ENV = ();
  for my $name (keys %$env) {
    next if $name eq '';
    my ($key, $value) = ($name, $env->{$name});
    utf8::encode($key);
    utf8::encode($value);
    $ENV{$key} = $value;
  }
  exec { $shell } $shell, '-c', $command or $fail->("$!", 127);
}

sub tell_exit {
  my ($pid) = @_;
  my $child = $children{$pid};
  return unless $child->{state} eq 'spawned' && defined $child->{exit};
  delete $children{$pid};
  reply($child->{control}, $child->{exit});
  close $child->{control};
}

sub read_exec_report {
  my ($fh) = @_;
  my $report = $exec_reports{fileno $fh};
  my $read = sysread $fh, my $bytes, 4096;
  if ($read) {
    $report->{said} .= $bytes;
    return;
  }
  delete $exec_reports{fileno $fh};
  $select->remove($fh);
  close $fh;
  my $child = $children{ $report->{pid} } or return;
  if ($report->{said} eq '') {
    $child->{state} = 'spawned';
    reply($child->{control}, sprintf '{"type":"spawned","pid":%d,"at":%.3f}', $report->{pid}, $child->{forked_at});
    tell_exit($report->{pid});
  } else {
    $child->{state} = 'failed';
    # Its exit, heard already or still to come, is nobody's to hear.
    delete $children{ $report->{pid} } if defined $child->{exit};
    my $message = $report->{said};
    utf8::decode($message);
    reply($child->{control}, error_line($message));
    close $child->{control};
  }
}

sub read_hello {
  my ($fh) = @_;
  my $pending = $hellos{fileno $fh};
  my $read = sysread $fh, my $bytes, 65536;
  my $drop = sub {
    delete $hellos{fileno $fh};
    $select->remove($fh);
    close $fh;
  };
  return $drop->() unless $read;
  $pending->{buffer} .= $bytes;
  my $end = index $pending->{buffer}, "\n";
  if ($end < 0) {
    $drop->() if length $pending->{buffer} > $longest_line;
    return;
  }
  # The first line is all a connection ever says to the spawner: a stream connection then belongs to the child, and an
  # actor writes a child's stdin only once it was told the child exists.
  delete $hellos{fileno $fh};
  $select->remove($fh);
  my $hello = parse_hello(substr $pending->{buffer}, 0, $end);
  return close $fh unless defined $hello;
  attach($hello, $fh);
}

sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    my $status = $?;
    my $child = $children{$pid} or next;
    if ($child->{state} eq 'failed') {
      delete $children{$pid};
      next;
    }
    my $signal = $status & 127;
    $child->{exit} = $signal
      ? sprintf('{"type":"exit","code":null,"signal":"SIG%s"}', $signal_names[$signal])
      : sprintf('{"type":"exit","code":%d,"signal":null}', $status >> 8);
    tell_exit($pid);
  }
}

sub expire {
  my $cutoff = time - $ASSEMBLY_TIMEOUT_S;
  for my $spawn (keys %assemblies) {
    drop_assembly($spawn) if $assemblies{$spawn}{since} < $cutoff;
  }
  for my $fd (keys %hellos) {
    my $pending = $hellos{$fd};
    next unless $pending->{since} < $cutoff;
    delete $hellos{$fd};
    $select->remove($pending->{fh});
    close $pending->{fh};
  }
}

syswrite STDOUT, "$ready_line\n";

for (;;) {
  my $waiting = %children || %assemblies || %hellos;
  for my $fh ($select->can_read($waiting ? $REAP_EVERY_S : undef)) {
    if ($fh == $server) {
      accept(my $connection, $server) or next;
      $hellos{fileno $connection} = { fh => $connection, buffer => '', since => time };
      $select->add($connection);
    } elsif ($fh == \*STDIN) {
      my $read = sysread STDIN, my $bytes, 4096;
      exit 0 unless $read;
    } elsif ($fh == $wake_read) {
      1 while sysread $wake_read, my $bytes, 4096;
    } elsif (exists $hellos{fileno $fh}) {
      read_hello($fh);
    } elsif (exists $exec_reports{fileno $fh}) {
      read_exec_report($fh);
    } elsif (exists $waiting_controls{fileno $fh}) {
      # A control socket says nothing after its first line; its end before the request was complete drops the request.
      my $read = sysread $fh, my $bytes, 4096;
      drop_assembly($waiting_controls{fileno $fh}) unless $read;
    }
  }
  reap();
  expire();
}

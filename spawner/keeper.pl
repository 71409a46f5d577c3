# The keeper of a persisted job (exec_command with persist: true): a small process outside Pi's tree that holds the
# job's stdio and outlives Pi. Started by host/persist/keeper.ts; it detaches itself (double fork, a session of its
# own), so Pi's shutdown, the exit net and the crash cleanup, which reach Pi's descendants and the processes tagged
# with Pi's runtime, never reach it or its job.
#
# Usage: perl keeper.pl <entry dir> <tag> <lifetime seconds> <grace seconds> <shell> <command>
#   Runs `<shell> -c <command>` in the current directory, in a process group of its own, with PI_JOBS_JOB=<tag> in
#   its environment (the job's own tag, shared/process-table/tags.ts: what leaves the group is still found by it; the
#   keeper itself does not carry it, so a stop by the tag never ends the keeper before it records the end); its
#   stdout and stderr appended to <entry dir>/log, its stdin read from the FIFO <entry dir>/stdin, which the keeper holds open for
#   writing too, so that the job never reads an end of file while nobody writes. It prints "started <keeper pid>
#   <job pid> <epoch ms>" once the job runs, and then nothing more: its own stdio is /dev/null from then on.
#   SIGTERM asks it to stop the job: SIGTERM to the job's group, SIGKILL after the grace. So does the lifetime. When
#   the job's shell has ended, what is left in its group, and (on Linux) what left it carrying the tag, gets the same,
#   and the keeper writes <entry dir>/end,
#   "exit <code|-> signal <name|-> ended <epoch ms> cause <exited|stopped|timeout>", atomically (a temporary file,
#   then rename), and exits.
# Everything it writes is private (umask 077). Only perl's own modules: POSIX and Fcntl.
use strict;
use warnings;
use Config;
use Fcntl qw(O_RDWR);
use POSIX ();

# write_atomic: spawner/entry-dir.pl, beside this file.
my $here = __FILE__ =~ s{[^/]*\z}{}r;
require(($here =~ m{\A\.{0,2}/} ? $here : "./$here") . 'entry-dir.pl');

my ($dir, $tag, $lifetime_s, $grace_s, $shell, $command) = @ARGV;
die "usage: keeper.pl <entry dir> <tag> <lifetime seconds> <grace seconds> <shell> <command>\n"
  unless defined $command && -d $dir && $tag =~ m{^[A-Za-z0-9-]+/[A-Za-z0-9_.-]+$} && $lifetime_s =~ /^\d+(?:\.\d+)?$/ && $grace_s =~ /^\d+(?:\.\d+)?$/;

umask 077;
my @signal_names = split ' ', $Config{sig_name};
my $now_ms = eval { require Time::HiRes; 1 } ? sub { int(Time::HiRes::time() * 1000) } : sub { time() * 1000 };

# The processes that carry the job's tag, the keeper's own pid excepted: on Linux, read from /proc/<pid>/environ.
# Elsewhere none are found, and what left the job's group outlives it until a Pi stops it by its tag (kill_session).
sub tagged {
  opendir(my $proc, '/proc') or return ();
  my $wanted = "PI_JOBS_JOB=$tag";
  my @found;
  for my $pid (grep { /^\d+$/ && $_ != $$ } readdir $proc) {
    open(my $environ, '<', "/proc/$pid/environ") or next;
    local $/ = "\0";
    while (defined(my $entry = <$environ>)) {
      chomp $entry;
      if ($entry eq $wanted) { push @found, $pid; last }
    }
  }
  return @found;
}

# The launcher: it waits for the keeper's word and passes it on, so that the caller learns the pids and that the
# job runs, and ends as soon as it has. The keeper is its grandchild, in a session of its own, and init's child once
# this launcher and the middle process have ended.
pipe(my $word_read, my $word_write) or die "pipe: $!";
my $middle = fork;
die "fork: $!" unless defined $middle;
if ($middle) {
  close $word_write;
  my $word = <$word_read>;
  waitpid $middle, 0;
  print $word if defined $word;
  exit(defined $word && $word =~ /^started / ? 0 : 1);
}
close $word_read;
POSIX::setsid();
my $keeper = fork;
POSIX::_exit(defined $keeper ? 0 : 1) if !defined $keeper || $keeper;

# The keeper. Its own stdio goes nowhere: the terminal Pi ran in may close at any time.
open STDIN, '<', '/dev/null';
open STDOUT, '>', '/dev/null';
open STDERR, '>>', "$dir/keeper.log";
$SIG{HUP} = 'IGNORE';
$SIG{INT} = 'IGNORE';
$SIG{PIPE} = 'IGNORE';

my $fifo_path = "$dir/stdin";
POSIX::mkfifo($fifo_path, 0600) or die "mkfifo: $!";
sysopen(my $fifo, $fifo_path, O_RDWR) or die "fifo: $!";
open(my $log, '>>', "$dir/log") or die "log: $!";

my $job = fork;
die "fork: $!" unless defined $job;
if ($job == 0) {
  setpgrp(0, 0);
  POSIX::dup2(fileno($fifo), 0);
  POSIX::dup2(fileno($log), 1);
  POSIX::dup2(fileno($log), 2);
  close $word_write;
  $SIG{$_} = 'DEFAULT' for qw(HUP INT PIPE TERM);
  # Its own tag, never that of the Pi that started it: a persisted job is not that Pi's to clean up.
  $ENV{PI_JOBS_JOB} = $tag;
  { no warnings 'exec'; exec { $shell } $shell, '-c', $command; }
  POSIX::_exit(127);
}
# Both sides set the group, so that a signal sent right after the fork already reaches it.
setpgrp($job, $job);
close $log;

my $stop = 0;
$SIG{TERM} = sub { $stop = 1 };
my $started = $now_ms->();
write_atomic($dir, 'keeper', "keeper $$ job $job started $started\n");
print {$word_write} "started $$ $job $started\n";
close $word_write;

my $deadline = time + $lifetime_s;
my ($cause, $kill_at, $status) = ('exited', undef, undef);
while (1) {
  my $reaped = waitpid $job, POSIX::WNOHANG();
  if ($reaped == $job) { $status = $?; last }
  if ($reaped < 0) { last }
  if (!defined $kill_at && ($stop || time >= $deadline)) {
    $cause = $stop ? 'stopped' : 'timeout';
    kill 'TERM', -$job;
    $kill_at = time + $grace_s;
  } elsif (defined $kill_at && time >= $kill_at) {
    kill 'KILL', -$job;
  }
  select undef, undef, undef, 0.1;
}
my $ended = $now_ms->();
# What the shell left in its group, and what left the group carrying the job's tag, ends with it, as an ordinary
# job's leftovers do.
my @left = tagged();
if (kill(0, -$job) || @left) {
  kill 'TERM', -$job;
  kill 'TERM', @left;
  my $until = time + $grace_s;
  while (time < $until) {
    @left = tagged();
    last unless kill(0, -$job) || @left;
    select undef, undef, undef, 0.05;
  }
  kill 'KILL', -$job;
  kill 'KILL', @left;
}
my ($code, $signal) = ('-', '-');
if (defined $status) {
  if ($status & 127) { $signal = 'SIG' . ($signal_names[$status & 127] // ($status & 127)) }
  else { $code = $status >> 8 }
}
write_atomic($dir, 'end', "exit $code signal $signal ended $ended cause $cause\n");
exit 0;

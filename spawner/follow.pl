# The follower of a persisted job: what a job actor runs in place of the command of a job started with persist: true.
# It copies the job's log (written by spawner/keeper.pl) to its stdout from an offset on, and its own stdin into the
# job's FIFO, so that the actor serves the job like any other: reads, input, readiness by output, the wake. Once the
# keeper has recorded the job's end and the log is copied to its end, it ends as the job did: with its exit code, or
# killed by its signal.
#
# Usage: perl follow.pl <entry dir> <offset>
# It never stops the job. A signal ends the follower only (SIGTERM once the offset is recorded): that is how Pi's shutdown, the exit
# net and the crash cleanup leave a persisted job running. kill_session stops the job through its keeper first
# (host/persist/keeper.ts). It records how far it copied in <entry dir>/read, so that the next follower goes on
# from there. Only perl's own modules: POSIX and Fcntl.
use strict;
use warnings;
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK O_WRONLY);
use POSIX ();

# write_atomic: spawner/entry-dir.pl, beside this file.
my $here = __FILE__ =~ s{[^/]*\z}{}r;
require(($here =~ m{\A\.{0,2}/} ? $here : "./$here") . 'entry-dir.pl');

my ($dir, $offset) = @ARGV;
die "usage: follow.pl <entry dir> <offset>\n" unless defined $offset && $offset =~ /^\d+$/ && -d $dir;
umask 077;
$SIG{PIPE} = 'IGNORE';

my $CHUNK = 65536;
# How often the end and the keeper are looked at, and the copied offset recorded, at most.
my $LOOK_EVERY_S = 0.1;

sub slurp {
  my ($path) = @_;
  open(my $fh, '<', $path) or return undef;
  local $/;
  my $text = <$fh>;
  return $text;
}

my ($keeper_pid) = (slurp("$dir/keeper") // '') =~ /^keeper (\d+) /;
die "follow.pl: $dir has no keeper record\n" unless defined $keeper_pid;

open(my $log, '<', "$dir/log") or die "follow.pl: log: $!\n";
binmode $log;
seek $log, $offset, 0;
binmode STDOUT;
fcntl(STDIN, F_SETFL, fcntl(STDIN, F_GETFL, 0) | O_NONBLOCK);
my $stdin_open = 1;
my $fifo;
my $recorded = -1;

# SIGTERM waits while a write and its count are under way: its handler records the offset, which must count every
# byte written and none that was not, or the next follower would repeat output this one already handed on.
my $term_only = POSIX::SigSet->new(POSIX::SIGTERM());

# Copies what the log holds past the offset; returns how many bytes it copied.
sub copy_log {
  my $copied = 0;
  while (1) {
    my $buffer;
    my $read = sysread $log, $buffer, $CHUNK;
    last unless $read;
    my $at = 0;
    while ($at < $read) {
      POSIX::sigprocmask(POSIX::SIG_BLOCK(), $term_only);
      my $wrote = syswrite STDOUT, $buffer, $read - $at, $at;
      # The actor is gone: nobody reads any more.
      POSIX::_exit(0) unless defined $wrote;
      $at += $wrote;
      $offset += $wrote;
      POSIX::sigprocmask(POSIX::SIG_UNBLOCK(), $term_only);
    }
    $copied += $read;
  }
  return $copied;
}

# Input for the job goes to its FIFO, which the keeper holds open; without a keeper there is nobody to take it.
sub forward_input {
  my $buffer;
  my $read = sysread STDIN, $buffer, $CHUNK;
  if (defined $read && $read == 0) { $stdin_open = 0; return }
  return unless $read;
  if (!defined $fifo) {
    sysopen($fifo, "$dir/stdin", O_WRONLY | O_NONBLOCK) or do { undef $fifo; return };
    # The job reads at its own pace: input waits in the pipe, and the follower blocks when the pipe is full.
    fcntl($fifo, F_SETFL, fcntl($fifo, F_GETFL, 0) & ~O_NONBLOCK);
  }
  syswrite $fifo, $buffer;
}

sub record_offset {
  return if $offset == $recorded;
  write_atomic($dir, 'read', "$offset\n");
  $recorded = $offset;
}

# Pi stops a follower with SIGTERM (its quit, a takeover): what was copied is recorded first, so that the next
# follower neither repeats it nor starts over; then the signal ends it as before.
$SIG{TERM} = sub {
  record_offset();
  $SIG{TERM} = 'DEFAULT';
  kill 'TERM', $$;
};

sub end_as {
  my ($end) = @_;
  copy_log();
  record_offset();
  my ($code, $signal, $cause) = $end =~ /^exit (\S+) signal (\S+) ended \d+ cause (\w+)/;
  print STDERR "pi-jobs: the keeper ended this persisted job at its hard lifetime (timeout_seconds)\n" if ($cause // '') eq 'timeout';
  if (defined $signal && $signal ne '-') {
    (my $name = $signal) =~ s/^SIG//;
    $SIG{$name} = 'DEFAULT';
    kill $name, $$;
    select undef, undef, undef, 0.5;
    exit 128;
  }
  exit(defined $code && $code =~ /^\d+$/ ? $code : 1);
}

while (1) {
  copy_log();
  record_offset();
  my $end = slurp("$dir/end");
  end_as($end) if defined $end;
  if (!kill 0, $keeper_pid) {
    # The keeper writes the end before it exits; a look after its exit sees it, or it died without one.
    $end = slurp("$dir/end");
    end_as($end) if defined $end;
    copy_log();
    record_offset();
    print STDERR "pi-jobs: the keeper of this persisted job ended without recording the job's end\n";
    exit 125;
  }
  my $readers = '';
  vec($readers, fileno(STDIN), 1) = 1 if $stdin_open;
  my $ready = select(my $ready_readers = $readers, undef, undef, $LOOK_EVERY_S);
  forward_input() if $ready > 0 && $stdin_open;
}

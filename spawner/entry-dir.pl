# What spawner/keeper.pl and spawner/follow.pl, which load this file, both do in a persisted job's entry directory.
use strict;
use warnings;

# Writes the file <dir>/<name> atomically: a temporary file beside it, then a rename. Nothing is written on an error.
sub write_atomic {
  my ($dir, $name, $text) = @_;
  my $temp = "$dir/.$name.$$";
  open(my $fh, '>', $temp) or return;
  print {$fh} $text;
  close $fh or return;
  rename $temp, "$dir/$name";
}

1;

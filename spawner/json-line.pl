# The JSON of the spawner's protocol lines (mailbox/spawner-protocol.ts), for spawner/spawner.pl, which loads this
# file: `decode_line` and `json_string`. JSON::PP took ~4 ms to decode one request with a whole environment (7 KB), more
# than the fork; the protocol's shapes need only this much of it: objects, strings, booleans, null and numbers, objects
# nested at most MAX_DEPTH deep. A value that is not JSON, or not one of these, dies.
use strict;
use warnings;

my $MAX_DEPTH = 4;
my $STRING = qr/"((?:[^"\\]++|\\.)*+)"/s;
my %ESCAPES = ('"' => '"', '\\' => '\\', '/' => '/', b => "\b", f => "\f", n => "\n", r => "\r", t => "\t");

sub unescape {
  my ($text) = @_;
  return $text if index($text, '\\') < 0;
  $text =~ s{\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|\\(["\\/bfnrt])}{
    defined $1 ? chr(0x10000 + ((hex($1) - 0xD800) << 10) + (hex($2) - 0xDC00)) : defined $3 ? chr(hex $3) : $ESCAPES{$4}
  }ge;
  return $text;
}

sub parse_value {
  my ($text, $depth) = @_;
  $$text =~ /\G\s*/gc;
  return unescape($1) if $$text =~ /\G$STRING/gc;
  return \1 if $$text =~ /\Gtrue/gc;
  return \0 if $$text =~ /\Gfalse/gc;
  return undef if $$text =~ /\Gnull/gc;
  return 0 + $1 if $$text =~ /\G(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)/gc;
  die "not JSON\n" unless $depth < $MAX_DEPTH && $$text =~ /\G\{\s*/gc;
  my %object;
  return \%object if $$text =~ /\G\}/gc;
  for (;;) {
    $$text =~ /\G\s*$STRING\s*:/gc or die "not JSON\n";
    my $key = unescape($1);
    $object{$key} = parse_value($text, $depth + 1);
    $$text =~ /\G\s*/gc;
    next if $$text =~ /\G,/gc;
    return \%object if $$text =~ /\G\}/gc;
    die "not JSON\n";
  }
}

# One line's value, or undef when it is not JSON of these shapes.
sub decode_line {
  my ($bytes) = @_;
  my $text = $bytes;
  return undef unless utf8::decode($text);
  my $value = eval { parse_value(\$text, 0) };
  return undef if $@ || $text !~ /\G\s*\z/gc;
  return $value;
}

sub json_string {
  my ($text) = @_;
  $text =~ s/(["\\])/\\$1/g;
  $text =~ s/([\x00-\x1f])/sprintf '\\u%04x', ord $1/ge;
  return qq("$text");
}

1;

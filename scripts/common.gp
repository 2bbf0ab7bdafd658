# common.gp: what every plot shares; each script loads it first. The caller
# sets `out`, the image's path without extension; a script draws with
#   @png; plot ...; @svg
# which writes out.png (pngcairo, or libgd's png where cairo is missing)
# and then the same plot as out.svg.
size = "size 900,560"
pngterm = strstrt(GPVAL_TERMINALS, "pngcairo") \
	? "pngcairo noenhanced ".size." font 'Sans,11' linewidth 1.5" \
	: "png noenhanced ".size
png = "set terminal ".pngterm."; set output out.'.png'"
svg = "set terminal svg noenhanced ".size." font 'Sans,11' linewidth 1.5; set output out.'.svg'; replot; unset output"

# colour-blind-safe colours (Okabe-Ito), one point shape each
set linetype 1 linecolor rgb '#0072b2' pointtype 7
set linetype 2 linecolor rgb '#d55e00' pointtype 5
set linetype 3 linecolor rgb '#009e73' pointtype 9
set linetype 4 linecolor rgb '#cc79a7' pointtype 11
set linetype 5 linecolor rgb '#e69f00' pointtype 13
set linetype 6 linecolor rgb '#56b4e9' pointtype 3
set linetype cycle 6
set pointsize 1.1
set grid linecolor rgb '#d0d0d0'
set key box opaque samplen 2 spacing 1.2
set datafile missing 'nan'

/* FITS reading and writing through cfitsio (fits.h). */
#include "io/fits.h"

#include <errno.h>
#include <fitsio.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "io/atomic.h"

struct pyr_fits_reader {
    fitsfile *fp;
    char *path;
    pyr_fits_info_t info;
};

struct pyr_fits_writer {
    fitsfile *fp;
    pyr_atomic_file_t af;
    int64_t nx, ny, nframes;
};

static const char *fits_reason(int status, char *buf)
{
    fits_get_errstatus(status, buf);
    return buf;
}

/* The name handed to cfitsio's disk-file calls.  They take it as it is (no
 * extended syntax: "a(b).fits" and "x[1].fits" are plain names), but still
 * skip leading blanks and expand a leading '~' to a home directory, so a
 * relative name goes as "./name".  malloc'd. */
static char *disk_name(const char *path)
{
    int relative = path[0] != '/' && strncmp(path, "./", 2) != 0;
    size_t n = strlen(path) + 3;
    char *name = malloc(n);
    if (name) snprintf(name, n, "%s%s", relative ? "./" : "", path);
    return name;
}

static int structural(const char *card)
{
    static const char *const keys[] = {"SIMPLE", "BITPIX", "NAXIS", "EXTEND", "BSCALE", "BZERO", "BLANK", "XTENSION",
                                       "PCOUNT", "GCOUNT", "CHECKSUM", "DATASUM", "END", "ZIMAGE", "ZBITPIX", "ZNAXIS",
                                       "ZTILE", "ZCMPTYPE", "ZQUANTIZ", "TFIELDS", "TTYPE", "TFORM", "EXTNAME", "EXTVER",
                                       "INHERIT"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!strncmp(card, keys[k], strlen(keys[k]))) return 1;
    return 0;
}

/* Commentary cards (COMMENT, HISTORY, a blank keyword) may repeat; every
 * other keyword is kept once. */
static int commentary(const char *card)
{
    return !strncmp(card, "COMMENT", 7) || !strncmp(card, "HISTORY", 7) || !strncmp(card, "        ", 8);
}

/* Hash of a card's keyword: its first 8 characters (fewer at a NUL), the
 * part the duplicate test compares. */
static size_t keyword_hash(const char *card)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < 8 && card[i]; i++) h = (h ^ (unsigned char)card[i]) * 16777619u;
    return h;
}

/* cfitsio unpacks a gzip-compressed file into memory when it opens it, and
 * sizes that memory by the uncompressed size the file states in its last 4
 * bytes (modulo 2^32).  Deflate expands at most 1032-fold, so a larger claim
 * is a damaged or forged file, refused before cfitsio allocates it. */
static pyr_status_t check_gzip_size(FILE *fp, int64_t size, const char *path)
{
    unsigned char b[4];
    if (size < 18 || fseek(fp, (long)(size - 4), SEEK_SET) != 0 || fread(b, 1, 4, fp) != 4)
        return pyr_fail(PYR_ERR_FORMAT, "%s: the gzip-compressed file is truncated (%lld bytes)", path, (long long)size);
    double claim = (double)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
    if (size > 10000) /* as cfitsio reads a size modulo 2^32 */
        while (claim < (double)size) claim += 4294967296.0;
    if (claim > 1032.0 * (double)size + 65536.0)
        return pyr_fail(PYR_ERR_FORMAT, "%s: the gzip-compressed file states an uncompressed size of %.0f bytes, more than its %lld "
                                        "bytes can hold: it is damaged (gunzip -t %s tells more)",
                        path, claim, (long long)size, path);
    return PYR_OK;
}

/* Other compressed forms (zip, compress, pack, LZH, bzip2), by their first
 * two bytes: named in the message rather than called "not FITS". */
static const char *other_compression(const unsigned char *h)
{
    if (h[0] == 'P' && h[1] == 'K') return "zip";
    if (h[0] == 0x1f && h[1] == 0x9d) return "compress (.Z)";
    if (h[0] == 0x1f && (h[1] == 0x1e || h[1] == 0xa0)) return "pack or LZH";
    if (h[0] == 'B' && h[1] == 'Z') return "bzip2";
    return NULL;
}

/* cfitsio's byte-level read at the position ffmbyt set; exported, but
 * declared only in its private fitsio2.h. */
int ffgbyt(fitsfile *fptr, LONGLONG nbytes, void *buffer, int *status);

/* A card as cfitsio reads it: the keyword runs to a blank or '=' (into
 * name, 75 bytes); the value follows "= " in columns 9-10, or else the first
 * '=' (NULL: none); its token (*len bytes from *value) runs from the first
 * non-blank to a blank or '/', or is a quoted string (*quoted). */
static void split_card(const char *card, char *name, const char **value, size_t *len, int *quoted)
{
    size_t n = strcspn(card, " =");
    if (n > 74) n = 74;
    memcpy(name, card, n);
    name[n] = 0;
    const char *eq = !strncmp(card + 8, "= ", 2) ? card + 8 : strchr(card, '=');
    *value = NULL;
    *len = 0;
    *quoted = 0;
    if (!eq) return;
    const char *v = eq + 1 + strspn(eq + 1, " ");
    *value = v;
    *quoted = *v == '\'';
    *len = *quoted ? strlen(v) : strcspn(v, " /");
}

/* A value token that is wholly a finite number. */
static int token_number(const char *v, size_t len, double *x)
{
    char buf[80], *end;
    if (!v || len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, v, len);
    buf[len] = 0;
    *x = strtod(buf, &end);
    return *end == 0 && isfinite(*x);
}

/* Keywords cfitsio reads as integers while it moves to an HDU. */
static int integer_key(const char *name)
{
    static const char *const exact[] = {"BITPIX", "NAXIS", "PCOUNT", "GCOUNT", "TFIELDS", "THEAP", "BLANK", "ZBITPIX",
                                        "ZNAXIS", "ZDITHER0", "ZBLANK", "ZPCOUNT", "ZGCOUNT", "ZTHEAP"};
    static const char *const prefix[] = {"NAXIS", "ZNAXIS", "ZTILE", "ZVAL", "TBCOL", "TNULL"};
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
        if (!strcmp(name, exact[i])) return 1;
    for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++) {
        size_t n = strlen(prefix[i]);
        if (!strncmp(name, prefix[i], n) && name[n] >= '0' && name[n] <= '9') return 1;
    }
    return 0;
}

/* cfitsio reads the next HDU's header as it moves there and trusts some of
 * its cards: (before 4.6) it divides by a compressed image's tile sizes
 * (ZTILEn, or the first axis length ZNAXIS1 where ZTILE1 is missing) and
 * RICE_1 block size (ZVAL1) unchecked, so that a 0 there, a
 * fraction read as 0, a value that is no number (read as 0) or one past a
 * 32-bit integer ends the program with SIGFPE; and it copies a table's column name (TTYPEn) into 70
 * bytes, which an unquoted value of 70 characters overflows (the C library
 * ends the program); and its message for an integer value it cannot read
 * copies the value's first 30 characters into a buffer with room for 28.  The next header's raw cards are read first, as
 * cfitsio reads them, and such a file refused. */
static pyr_status_t check_next_header(fitsfile *fp, const char *path)
{
    LONGLONG head = 0, data = 0, end = 0;
    int status = 0;
    if (fits_get_hduaddrll(fp, &head, &data, &end, &status) || ffmbyt(fp, end, 0 /* report the end of the file */, &status))
        return PYR_OK; /* no next header: cfitsio says so on moving */
    int zimage = 0, rice = 0, zero_tile = 0, zero_block = 0, long_name = 0, empty_axis = 0;
    char card[81], name[75], long_int[75] = "";
    card[80] = 0;
    for (long k = 0; k < (1L << 24) && !ffgbyt(fp, 80, card, &status); k++) {
        if (!strncmp(card, "END     ", 8)) break;
        const char *v;
        size_t len;
        int quoted;
        double x;
        split_card(card, name, &v, &len, &quoted);
        if (!strcmp(name, "ZIMAGE")) zimage = v && *v == 'T';
        else if (!strcmp(name, "ZCMPTYPE")) rice |= v && strstr(v, "RICE") != NULL;
        else if (!strncmp(name, "ZNAXIS", 6) && name[6] >= '1' && name[6] <= '9')
            empty_axis |= !token_number(v, len, &x) || !(x >= 1 && x <= 9.2e18);
        else if (!strncmp(name, "ZTILE", 5)) zero_tile |= !token_number(v, len, &x) || !(x >= 1 && x <= INT_MAX);
        else if (!strcmp(name, "ZVAL1")) zero_block |= !token_number(v, len, &x) || !(fabs(x) >= 1 && fabs(x) <= INT_MAX);
        else if (!strncmp(name, "TTYPE", 5)) long_name |= v && !quoted && len >= 70;
        if (v && len >= 29 && !*long_int && integer_key(name)) snprintf(long_int, sizeof long_int, "%s", name);
    }
    if (*long_int)
        return pyr_fail(PYR_ERR_FORMAT, "%s: the header after byte %lld gives %s a value of 29 characters or more, where FITS "
                                        "has an integer: the file is damaged",
                        path, (long long)end, long_int);
    if (long_name)
        return pyr_fail(PYR_ERR_FORMAT, "%s: the table after byte %lld names a column with an unquoted value of 70 characters "
                                        "(TTYPEn), which FITS does not allow: the file is damaged",
                        path, (long long)end);
    if (zimage && empty_axis)
        return pyr_fail(PYR_ERR_FORMAT, "%s: the compressed image after byte %lld has an axis length ZNAXISn that is not a "
                                        "number from 1 to 2^63 - 1: the file is damaged",
                        path, (long long)end);
    if (zimage && (zero_tile || (rice && zero_block)))
        return pyr_fail(PYR_ERR_FORMAT, "%s: the compressed image after byte %lld has %s that is not a number from 1 to 2^31 - 1: "
                                        "the file is damaged",
                        path, (long long)end, zero_tile ? "a tile size ZTILEn" : "the RICE_1 block size ZVAL1");
    return PYR_OK;
}

/* Move to the HDU that fits_open_image would choose: the primary, unless it
 * holds no data, then the first image extension of NAXIS > 0 (the primary
 * again when there is none). */
static pyr_status_t move_to_image(fitsfile *fp, const char *path, int *status)
{
    int naxis = 0, type;
    long naxes[9] = {0};
    fits_get_img_param(fp, 9, NULL, &naxis, naxes, status);
    if (*status) return PYR_OK;
    int empty = naxis == 0;
    for (int a = 0; a < naxis && a < 9; a++) empty |= naxes[a] == 0;
    if (!empty) return PYR_OK;
    for (;;) {
        PYR_TRY(check_next_header(fp, path));
        if (fits_movrel_hdu(fp, 1, &type, status)) {
            if (*status == END_OF_FILE) *status = 0;
            fits_movabs_hdu(fp, 1, &type, status);
            return PYR_OK;
        }
        if (type != IMAGE_HDU) continue;
        fits_get_img_dim(fp, &naxis, status);
        if (*status || naxis > 0) return PYR_OK;
    }
}

/* The image data the header promises must be in the file: a header that
 * lies about the size (NAXISn of terabytes in a small file) is refused here,
 * before buffers of that size are allocated. */
static pyr_status_t check_data_size(fitsfile *fp, const char *path, int hdu, int bitpix, int naxis, const long *naxes)
{
    LONGLONG head = 0, data = 0, end = 0;
    int status = 0;
    if (fits_get_hduaddrll(fp, &head, &data, &end, &status)) return PYR_OK; /* cfitsio reports it on reading */
    const double have = (double)fp->Fptr->filesize; /* of the unpacked copy, for a gzip-compressed file */
    if (!fits_is_compressed_image(fp, &status)) {
        const int bytes = (bitpix < 0 ? -bitpix : bitpix) / 8;
        double pixels = 1;
        for (int a = 0; a < naxis; a++) pixels *= (double)naxes[a];
        if ((double)data + pixels * bytes > have)
            return pyr_fail(PYR_ERR_FORMAT, "%s: HDU %d's header promises %ld x %ld x %ld pixels of %d bytes (%.0f bytes of image "
                                            "data from byte %lld), but the file holds %.0f bytes: it is truncated, or its NAXISn or "
                                            "BITPIX are wrong",
                            path, hdu, naxes[0], naxes[1], naxis > 2 ? naxes[2] : 1L, bytes, pixels * bytes, (long long)data, have);
        return PYR_OK;
    }
    /* a tile-compressed image: its table must be in the file (cfitsio checks
     * that the table has a row for every tile) */
    if ((double)end - 2879 > have)
        return pyr_fail(PYR_ERR_FORMAT, "%s: HDU %d's compressed image table needs %.0f bytes from byte %lld, but the file holds "
                                        "%.0f bytes: it is truncated or its header is wrong",
                        path, hdu, (double)(end - data), (long long)data, have);
    return PYR_OK;
}

/* The checks every FITS input passes before cfitsio sees it (a regular
 * file; gzip's stated size; other compressions named; the FITS signature),
 * then cfitsio's disk-file open at the primary HDU. */
static pyr_status_t open_disk(const char *path, fitsfile **fpp)
{
    *fpp = NULL;
    /* a regular file only: a FIFO would block the open until a writer came */
    FILE *probe = NULL;
    int64_t size = 0;
    int missing = 0;
    pyr_status_t st = pyr_open_input(path, "FITS input", &probe, &size, &missing);
    if (st != PYR_OK) return missing ? pyr_fail(PYR_ERR_IO, "cannot open FITS file %s: no such file", path) : st;
    unsigned char head[10] = {0};
    size_t got = fread(head, 1, 9, probe);
    if (got >= 2 && head[0] == 0x1f && head[1] == 0x8b) st = check_gzip_size(probe, size, path);
    else if (got >= 2 && other_compression(head))
        st = pyr_fail(PYR_ERR_FORMAT, "%s is compressed with %s, which is not read; decompress it first (FITS files are read "
                                      "as they are or gzip-compressed)",
                      path, other_compression(head));
    else if (got < 9 || memcmp(head, "SIMPLE  =", 9))
        st = pyr_fail(PYR_ERR_FORMAT, "%s is not a FITS file (it does not start with \"SIMPLE  =\"); "
                                      "give FITS images (.fits, .fit, .fts, also gzip-compressed) or a .npy stack",
                      path);
    fclose(probe);
    if (st != PYR_OK) return st;
    char *name = disk_name(path);
    if (!name) return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s", path);
    int status = 0;
    char why[FLEN_STATUS];
    fitsfile *fp = NULL;
    fits_open_diskfile(&fp, name, READONLY, &status);
    free(name);
    if (status) {
        if (fp) {
            int s2 = 0;
            fits_close_file(fp, &s2);
        }
        return pyr_fail(PYR_ERR_FORMAT, "cannot read FITS file %s: %s (cfitsio status %d); the file is damaged, "
                                        "truncated or holds no image",
                        path, fits_reason(status, why), status);
    }
    *fpp = fp;
    return PYR_OK;
}

/* Move from the current HDU to HDU `hdu` (1-based, after it), checking each
 * header before cfitsio reads it. */
static pyr_status_t move_forward_to(fitsfile *fp, const char *path, int hdu, int *status)
{
    int at = 0, type;
    fits_get_hdu_num(fp, &at);
    while (at < hdu && !*status) {
        PYR_TRY(check_next_header(fp, path));
        if (fits_movrel_hdu(fp, 1, &type, status)) break;
        at++;
    }
    return PYR_OK;
}

pyr_status_t pyr_fits_find_extensions(const char *path, const char *const *names, int n, int *hdus)
{
    if (!path || !hdus || (n > 0 && !names)) return pyr_fail(PYR_ERR_ARG, "pyr_fits_find_extensions: NULL argument");
    for (int i = 0; i < n; i++) hdus[i] = 0;
    fitsfile *fp = NULL;
    PYR_TRY(open_disk(path, &fp));
    pyr_status_t st = PYR_OK;
    int status = 0, type = IMAGE_HDU;
    for (int hdu = 1;; hdu++) {
        char extname[FLEN_VALUE] = "";
        int s2 = 0;
        if (type == IMAGE_HDU && !fits_read_key(fp, TSTRING, "EXTNAME", extname, NULL, &s2)) {
            size_t len = strlen(extname);
            while (len > 0 && extname[len - 1] == ' ') extname[--len] = 0;
            for (int i = 0; i < n; i++)
                if (!hdus[i] && !strcasecmp(extname, names[i])) hdus[i] = hdu;
        }
        /* a header cfitsio would crash on is an error; one it cannot read
         * (bytes after the last HDU) ends the file, as for a reader of its
         * first image */
        st = check_next_header(fp, path);
        if (st != PYR_OK || fits_movrel_hdu(fp, 1, &type, &status)) break;
    }
    int s3 = 0;
    fits_close_file(fp, &s3);
    return st;
}

static pyr_status_t open_at(const char *path, int want_hdu, pyr_fits_reader_t **reader, pyr_fits_info_t *info)
{
    if (!reader || !info || !path) return pyr_fail(PYR_ERR_ARG, "pyr_fits_open: NULL argument");
    *reader = NULL;
    memset(info, 0, sizeof *info);
    fitsfile *fp = NULL;
    PYR_TRY(open_disk(path, &fp));
    pyr_status_t st = PYR_OK;
    int status = 0;
    char why[FLEN_STATUS];
    if (want_hdu > 0) {
        st = move_forward_to(fp, path, want_hdu, &status);
        int type = IMAGE_HDU;
        if (st == PYR_OK && !status && fits_get_hdu_type(fp, &type, &status) == 0 && type != IMAGE_HDU)
            st = pyr_fail(PYR_ERR_FORMAT, "%s: HDU %d is a table, not an image", path, want_hdu);
    } else {
        st = move_to_image(fp, path, &status);
    }
    if (st != PYR_OK) {
        int s2 = 0;
        fits_close_file(fp, &s2);
        return st;
    }
    if (status) {
        if (fp) {
            int s2 = 0;
            fits_close_file(fp, &s2);
        }
        return pyr_fail(PYR_ERR_FORMAT, "cannot read FITS file %s: %s (cfitsio status %d); the file is damaged, "
                                        "truncated or holds no image",
                        path, fits_reason(status, why), status);
    }
    int bitpix = 0, naxis = 0;
    long naxes[9] = {0};
    fits_get_img_param(fp, 9, &bitpix, &naxis, naxes, &status);
    int hdu = 0;
    fits_get_hdu_num(fp, &hdu);
    if (status) {
        st = pyr_fail(PYR_ERR_FORMAT, "cannot read the image header of %s: %s", path, fits_reason(status, why));
    } else if (naxis < 2 || naxis > 9) {
        st = pyr_fail(PYR_ERR_FORMAT, "%s: HDU %d has a %d-dimensional image; frames need NAXIS = 2 (one frame) or 3 (a cube)",
                      path, hdu, naxis);
    } else {
        for (int a = 3; a < naxis; a++)
            if (naxes[a] > 1) {
                st = pyr_fail(PYR_ERR_FORMAT, "%s: image has NAXIS%d = %ld; only 2D frames and 3D cubes (NAXIS3 = frames) are read",
                              path, a + 1, naxes[a]);
                break;
            }
        if (st == PYR_OK && (naxes[0] < 1 || naxes[1] < 1 || (naxis > 2 && naxes[2] < 1)))
            st = pyr_fail(PYR_ERR_FORMAT, "%s: empty image (%ld x %ld x %ld)", path, naxes[0], naxes[1], naxis > 2 ? naxes[2] : 1L);
        if (st == PYR_OK) st = check_data_size(fp, path, hdu, bitpix, naxis, naxes);
    }
    if (st != PYR_OK) {
        int s2 = 0;
        fits_close_file(fp, &s2);
        return st;
    }
    pyr_fits_reader_t *r = calloc(1, sizeof *r);
    if (!r) {
        int s2 = 0;
        fits_close_file(fp, &s2);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s", path);
    }
    r->fp = fp;
    r->path = strdup(path);
    pyr_fits_info_t *in = &r->info;
    in->nx = naxes[0];
    in->ny = naxes[1];
    in->nframes = naxis >= 3 ? naxes[2] : 1;
    in->bitpix = bitpix;
    in->hdu = hdu;
    int s2 = 0;
    in->tile_compressed = fits_is_compressed_image(fp, &s2) == 1;
    in->bscale = 1;
    in->bzero = 0;
    s2 = 0;
    fits_read_key(fp, TDOUBLE, "BSCALE", &in->bscale, NULL, &s2);
    s2 = 0;
    fits_read_key(fp, TDOUBLE, "BZERO", &in->bzero, NULL, &s2);
    in->native = PYR_FITS_F32;
    if (bitpix == SHORT_IMG && in->bscale == 1) {
        if (in->bzero == 32768) in->native = PYR_FITS_U16;
        else if (in->bzero == 0) in->native = PYR_FITS_I16;
    }
    /* keep the descriptive cards of this HDU, and of an empty primary HDU
     * before an image extension (where observatories put DATE-OBS etc.) */
    int nkeys = 0;
    s2 = 0;
    fits_get_hdrspace(fp, &nkeys, NULL, &s2);
    int nprim = 0;
    if (hdu > 1) {
        int s3 = 0, type;
        fits_movabs_hdu(fp, 1, &type, &s3);
        fits_get_hdrspace(fp, &nprim, NULL, &s3);
        fits_movabs_hdu(fp, hdu, &type, &s3);
    }
    /* where each keyword is kept: a hash table of card indices (-1: free),
     * so that a header of many cards is read in linear time */
    size_t nslots = 16;
    while (nslots < 2 * ((size_t)nkeys + (size_t)nprim + 1)) nslots *= 2;
    int *slot = malloc(nslots * sizeof *slot);
    in->cards = calloc((size_t)(nkeys + nprim + 1), sizeof *in->cards);
    if (!in->cards || !r->path || !slot) {
        free(slot);
        pyr_fits_close(&r);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory reading the header of %s", path);
    }
    for (size_t i = 0; i < nslots; i++) slot[i] = -1;
    for (int pass = 0; pass < 2; pass++) {
        int which = pass == 0 ? 1 : hdu;
        if (pass == 0 && hdu == 1) continue;
        int s3 = 0, type, n = pass == 0 ? nprim : nkeys;
        fits_movabs_hdu(fp, which, &type, &s3);
        for (int k = 1; k <= n; k++) {
            char card[FLEN_CARD];
            s3 = 0;
            if (fits_read_record(fp, k, card, &s3)) break;
            if (structural(card) || !card[0]) continue;
            /* an extension's own value replaces the primary's */
            int at = -1;
            if (!commentary(card)) {
                size_t i = keyword_hash(card) & (nslots - 1);
                while (slot[i] >= 0 && strncmp(in->cards[slot[i]], card, 8)) i = (i + 1) & (nslots - 1);
                if (slot[i] < 0) slot[i] = in->ncards;
                at = slot[i];
            }
            if (at < 0 || at == in->ncards) at = in->ncards++;
            snprintf(in->cards[at], 81, "%s", card);
        }
    }
    free(slot);
    *info = *in;
    *reader = r;
    return PYR_OK;
}

pyr_status_t pyr_fits_open(const char *path, pyr_fits_reader_t **reader, pyr_fits_info_t *info)
{
    return open_at(path, 0, reader, info);
}

pyr_status_t pyr_fits_open_hdu(const char *path, int hdu, pyr_fits_reader_t **reader, pyr_fits_info_t *info)
{
    if (hdu < 1) return pyr_fail(PYR_ERR_ARG, "pyr_fits_open_hdu: HDU %d; HDUs are numbered from 1", hdu);
    return open_at(path, hdu, reader, info);
}

pyr_status_t pyr_fits_read_frame(pyr_fits_reader_t *r, int64_t index, pyr_fits_type_t type, void *out)
{
    if (!r || !out) return pyr_fail(PYR_ERR_ARG, "pyr_fits_read_frame: NULL argument");
    pyr_fits_info_t *in = &r->info;
    if (index < 0 || index >= in->nframes)
        return pyr_fail(PYR_ERR_ARG, "%s: frame %lld is outside 0..%lld", r->path, (long long)index, (long long)in->nframes - 1);
    if (type != PYR_FITS_F32 && type != in->native)
        return pyr_fail(PYR_ERR_ARG, "%s: the pixels are not %s integers; read them as float", r->path,
                        type == PYR_FITS_U16 ? "unsigned 16-bit" : "signed 16-bit");
    long long n = (long long)in->nx * in->ny;
    long fpixel[3] = {1, 1, (long)index + 1};
    int status = 0, anynul = 0;
    char why[FLEN_STATUS];
    if (type == PYR_FITS_F32) {
        float nul = NAN;
        fits_read_pix(r->fp, TFLOAT, fpixel, (LONGLONG)n, &nul, out, &anynul, &status);
    } else if (type == PYR_FITS_U16) {
        fits_read_pix(r->fp, TUSHORT, fpixel, (LONGLONG)n, NULL, out, &anynul, &status);
    } else {
        fits_read_pix(r->fp, TSHORT, fpixel, (LONGLONG)n, NULL, out, &anynul, &status);
    }
    if (status)
        return pyr_fail(PYR_ERR_FORMAT, "%s: cannot read frame %lld: %s (cfitsio status %d); the file is probably truncated",
                        r->path, (long long)index, fits_reason(status, why), status);
    return PYR_OK;
}

pyr_status_t pyr_fits_read_bits(pyr_fits_reader_t *r, int64_t index, uint32_t *out)
{
    if (!r || !out) return pyr_fail(PYR_ERR_ARG, "pyr_fits_read_bits: NULL argument");
    pyr_fits_info_t *in = &r->info;
    if (index < 0 || index >= in->nframes)
        return pyr_fail(PYR_ERR_ARG, "%s: frame %lld is outside 0..%lld", r->path, (long long)index, (long long)in->nframes - 1);
    /* bit patterns only from integers stored as they are (or with the
     * offset FITS uses for unsigned 16- and 32-bit values) */
    int unsigned16 = in->bitpix == SHORT_IMG && in->bzero == 32768, unsigned32 = in->bitpix == LONG_IMG && in->bzero == 2147483648.0;
    if (in->bitpix != BYTE_IMG && in->bitpix != SHORT_IMG && in->bitpix != LONG_IMG)
        return pyr_fail(PYR_ERR_FORMAT, "%s: HDU %d has BITPIX %d; a bit mask is an 8-, 16- or 32-bit integer image", r->path, in->hdu,
                        in->bitpix);
    if (in->bscale != 1 || (in->bzero != 0 && !unsigned16 && !unsigned32))
        return pyr_fail(PYR_ERR_FORMAT, "%s: HDU %d scales its integers (BSCALE %g, BZERO %g); a bit mask is stored unscaled",
                        r->path, in->hdu, in->bscale, in->bzero);
    long long n = (long long)in->nx * in->ny;
    long fpixel[3] = {1, 1, (long)index + 1};
    int status = 0, anynul = 0;
    char why[FLEN_STATUS];
    fits_read_pix(r->fp, TUINT, fpixel, (LONGLONG)n, NULL, out, &anynul, &status);
    if (status == NUM_OVERFLOW) { /* negative values of a signed mask: their bits are the pattern */
        status = 0;
        fits_read_pix(r->fp, TINT, fpixel, (LONGLONG)n, NULL, out, &anynul, &status);
    }
    if (status)
        return pyr_fail(PYR_ERR_FORMAT, "%s: cannot read frame %lld of HDU %d: %s (cfitsio status %d); the file is probably "
                                        "truncated",
                        r->path, (long long)index, in->hdu, fits_reason(status, why), status);
    return PYR_OK;
}

void pyr_fits_close(pyr_fits_reader_t **reader)
{
    if (!reader || !*reader) return;
    pyr_fits_reader_t *r = *reader;
    int status = 0;
    if (r->fp) fits_close_file(r->fp, &status);
    free(r->info.cards);
    free(r->path);
    free(r);
    *reader = NULL;
}

int pyr_fits_card_value(const pyr_fits_info_t *info, const char *key, char *buf, size_t size)
{
    size_t kl = strlen(key);
    for (int c = 0; c < info->ncards; c++) {
        const char *card = info->cards[c];
        if (strncasecmp(card, key, kl) || (card[kl] != ' ' && card[kl] != '=')) continue;
        const char *eq = strchr(card, '=');
        if (!eq || (eq - card > 9 && strncasecmp(card, "HIERARCH ", 9))) continue; /* HIERARCH keywords run past column 8 */
        char value[FLEN_VALUE], comment[FLEN_COMMENT];
        int status = 0;
        if (fits_parse_value((char *)card, value, comment, &status)) return 0;
        char *v = value;
        size_t n = strlen(v);
        if (n >= 2 && v[0] == '\'') { /* 'text   ' */
            v++;
            n -= 2;
            v[n] = 0;
            while (n > 0 && v[n - 1] == ' ') v[--n] = 0;
        }
        snprintf(buf, size, "%s", v);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- writer */

pyr_status_t pyr_fits_check_output(const char *path)
{
    struct stat st;
    if (!path || !*path || stat(path, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) return PYR_OK;
    return pyr_fail(PYR_ERR_IO, "cannot write %s: it is %s, and a FITS file needs a regular file (cfitsio seeks while writing); "
                                "name a regular file, write .npy instead (it goes to a device or FIFO as well), or give an "
                                "empty name to write none",
                    path, S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)" : "a character device");
}

/* cfitsio's statuses of a failed read, write, seek or close of the file
 * itself, where errno says why (a full disk) */
static int file_status(int status)
{
    return status == FILE_NOT_CREATED || status == WRITE_ERROR || status == END_OF_FILE || status == READ_ERROR ||
           status == FILE_NOT_CLOSED || status == SEEK_ERROR;
}

/* err: errno after the failed cfitsio call (0: none recorded) */
static pyr_status_t writer_fail(pyr_fits_writer_t *w, int status, int err, const char *what)
{
    char why[FLEN_STATUS];
    fits_get_errstatus(status, why);
    const char *path = w->af.path ? w->af.path : "FITS file";
    if (err && file_status(status))
        return pyr_fail(PYR_ERR_IO, "writing %s: %s failed: %s (cfitsio: %s, status %d)%s", path, what, strerror(err), why,
                        status, err == ENOSPC ? "; free some space or write elsewhere" : "");
    return pyr_fail(PYR_ERR_IO, "writing %s: %s failed: %s (cfitsio status %d)", path, what, why, status);
}

pyr_status_t pyr_fits_writer_open(const char *path, int64_t nx, int64_t ny, int64_t nframes, const char (*cards)[81],
                                  int ncards, const char *const *history, int nhistory, pyr_fits_writer_t **writer)
{
    if (!writer) return pyr_fail(PYR_ERR_ARG, "pyr_fits_writer_open: NULL writer");
    *writer = NULL;
    if (nx < 1 || ny < 1 || nframes < 1)
        return pyr_fail(PYR_ERR_ARG, "FITS image %lld x %lld x %lld: every axis needs at least 1 pixel", (long long)nx,
                        (long long)ny, (long long)nframes);
    PYR_TRY(pyr_fits_check_output(path));
    pyr_fits_writer_t *w = calloc(1, sizeof *w);
    if (!w) return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s", path);
    pyr_status_t st = pyr_atomic_open(&w->af, path);
    if (st != PYR_OK) {
        free(w);
        return st;
    }
    if (!w->af.tmp_path) { /* it became a device or FIFO since the check */
        pyr_atomic_abort(&w->af);
        free(w);
        st = pyr_fits_check_output(path);
        return st != PYR_OK ? st : pyr_fail(PYR_ERR_IO, "cannot write %s: a FITS file needs a regular file", path);
    }
    /* cfitsio creates the file itself and refuses an existing one: the
     * atomic file keeps the unique temporary name, its clean-up on signals,
     * the rename and the removal after a failure */
    fclose(w->af.fp);
    w->af.fp = NULL;
    unlink(w->af.tmp_path);
    char *name = disk_name(w->af.tmp_path);
    if (!name) {
        pyr_atomic_abort(&w->af);
        free(w);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory opening %s", path);
    }
    int status = 0;
    errno = 0;
    fits_create_diskfile(&w->fp, name, &status);
    free(name);
    long naxes[3] = {(long)nx, (long)ny, (long)nframes};
    if (!status) fits_create_img(w->fp, FLOAT_IMG, nframes > 1 ? 3 : 2, naxes, &status);
    for (int c = 0; c < ncards && !status; c++) {
        char card[81];
        snprintf(card, sizeof card, "%s", cards[c]);
        fits_write_record(w->fp, card, &status);
    }
    for (int h = 0; h < nhistory && !status; h++) fits_write_history(w->fp, history[h], &status);
    int err = errno;
    w->nx = nx;
    w->ny = ny;
    w->nframes = nframes;
    if (status) {
        st = writer_fail(w, status, err, "creating the image");
        pyr_fits_writer_abort(&w);
        return st;
    }
    *writer = w;
    return PYR_OK;
}

pyr_status_t pyr_fits_writer_frame(pyr_fits_writer_t *w, int64_t index, const float *data)
{
    if (!w || !data) return pyr_fail(PYR_ERR_ARG, "pyr_fits_writer_frame: NULL argument");
    if (index < 0 || index >= w->nframes)
        return pyr_fail(PYR_ERR_ARG, "FITS frame %lld outside 0..%lld", (long long)index, (long long)w->nframes - 1);
    long fpixel[3] = {1, 1, (long)index + 1};
    int status = 0;
    errno = 0;
    fits_write_pix(w->fp, TFLOAT, fpixel, (LONGLONG)(w->nx * w->ny), (void *)data, &status);
    if (status) return writer_fail(w, status, errno, "writing a frame");
    return PYR_OK;
}

pyr_status_t pyr_fits_writer_frames_table(pyr_fits_writer_t *w, int64_t n, const float *dx, const float *dy,
                                          const int *iterations, const char (*date_obs)[25], const double *exptime)
{
    char *ttype[6] = {"FRAME", "DX", "DY", "ITER", "DATE-OBS", "EXPTIME"};
    char *tform[6] = {"1J", "1E", "1E", "1J", "24A", "1D"};
    char *tunit[6] = {"", "pixel", "pixel", "", "", "s"};
    int ncol = 4 + (date_obs ? 1 : 0);
    if (exptime) {
        if (!date_obs) {
            ttype[4] = ttype[5];
            tform[4] = tform[5];
            tunit[4] = tunit[5];
        }
        ncol++;
    }
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    if (!idx) return pyr_fail(PYR_ERR_NOMEM, "out of memory writing the FRAMES table");
    int status = 0;
    errno = 0;
    fits_create_tbl(w->fp, BINARY_TBL, (LONGLONG)n, ncol, ttype, tform, tunit, "FRAMES", &status);
    for (int64_t i = 0; i < n; i++) idx[i] = (int)i;
    fits_write_col(w->fp, TINT, 1, 1, 1, (LONGLONG)n, idx, &status);
    fits_write_col(w->fp, TFLOAT, 2, 1, 1, (LONGLONG)n, (void *)dx, &status);
    fits_write_col(w->fp, TFLOAT, 3, 1, 1, (LONGLONG)n, (void *)dy, &status);
    fits_write_col(w->fp, TINT, 4, 1, 1, (LONGLONG)n, (void *)iterations, &status);
    int col = 5;
    if (date_obs && !status) {
        for (int64_t i = 0; i < n && !status; i++) {
            char *s = (char *)date_obs[i];
            fits_write_col(w->fp, TSTRING, col, (LONGLONG)i + 1, 1, 1, &s, &status);
        }
        col++;
    }
    if (exptime) fits_write_col(w->fp, TDOUBLE, col, 1, 1, (LONGLONG)n, (void *)exptime, &status);
    int err = errno;
    free(idx);
    if (status) return writer_fail(w, status, err, "writing the FRAMES table");
    return PYR_OK;
}

pyr_status_t pyr_fits_writer_commit(pyr_fits_writer_t **writer)
{
    if (!writer || !*writer) return pyr_fail(PYR_ERR_ARG, "pyr_fits_writer_commit: no writer");
    pyr_fits_writer_t *w = *writer;
    int status = 0;
    errno = 0;
    fits_close_file(w->fp, &status);
    int err = errno;
    w->fp = NULL;
    if (status) {
        pyr_status_t st = writer_fail(w, status, err, "closing");
        pyr_fits_writer_abort(writer);
        return st;
    }
    /* the atomic file syncs, closes and renames through its own handle */
    w->af.fp = fopen(w->af.tmp_path, "rb");
    if (!w->af.fp) {
        pyr_status_t st = pyr_fail(PYR_ERR_IO, "writing %s: the finished temporary file vanished", w->af.path);
        pyr_fits_writer_abort(writer);
        return st;
    }
    pyr_status_t st = pyr_atomic_commit(&w->af);
    free(w);
    *writer = NULL;
    return st;
}

void pyr_fits_writer_abort(pyr_fits_writer_t **writer)
{
    if (!writer || !*writer) return;
    pyr_fits_writer_t *w = *writer;
    int status = 0;
    if (w->fp) fits_close_file(w->fp, &status);
    pyr_atomic_abort(&w->af);
    free(w);
    *writer = NULL;
}

pyr_status_t pyr_fits_write_table(const char *path, const char *extname, const pyr_fits_column_t *cols, int ncols, int64_t nrows,
                                  const char (*cards)[81], int ncards)
{
    if (!path || !extname || !cols || ncols < 1 || ncols > 999 || nrows < 0)
        return pyr_fail(PYR_ERR_ARG, "pyr_fits_write_table: bad argument");
    PYR_TRY(pyr_fits_check_output(path));
    pyr_fits_writer_t *w = calloc(1, sizeof *w);
    char **ttype = calloc((size_t)ncols, sizeof *ttype), **tform = calloc((size_t)ncols, sizeof *tform),
         **tunit = calloc((size_t)ncols, sizeof *tunit);
    if (!w || !ttype || !tform || !tunit) {
        free(w);
        free(ttype);
        free(tform);
        free(tunit);
        return pyr_fail(PYR_ERR_NOMEM, "out of memory writing %s", path);
    }
    pyr_status_t st = pyr_atomic_open(&w->af, path);
    if (st == PYR_OK && !w->af.tmp_path) { /* it became a device or FIFO since the check */
        pyr_atomic_abort(&w->af);
        st = pyr_fail(PYR_ERR_IO, "cannot write %s: a FITS file needs a regular file", path);
    }
    if (st != PYR_OK) {
        free(w);
        free(ttype);
        free(tform);
        free(tunit);
        return st;
    }
    fclose(w->af.fp);
    w->af.fp = NULL;
    unlink(w->af.tmp_path);
    char *name = disk_name(w->af.tmp_path);
    int status = name ? 0 : MEMORY_ALLOCATION;
    errno = 0;
    if (name) fits_create_diskfile(&w->fp, name, &status);
    free(name);
    /* an empty primary HDU, as tables are written */
    if (!status) fits_create_img(w->fp, BYTE_IMG, 0, NULL, &status);
    for (int c = 0; c < ncards && !status; c++) {
        char card[81];
        snprintf(card, sizeof card, "%s", cards[c]);
        fits_write_record(w->fp, card, &status);
    }
    static char form_j[] = "1J", form_d[] = "1D", form_e[] = "1E";
    for (int c = 0; c < ncols; c++) {
        ttype[c] = (char *)cols[c].name;
        tform[c] = cols[c].type == 'J' ? form_j : cols[c].type == 'E' ? form_e : form_d;
        tunit[c] = (char *)(cols[c].unit ? cols[c].unit : "");
    }
    if (!status) fits_create_tbl(w->fp, BINARY_TBL, (LONGLONG)nrows, ncols, ttype, tform, tunit, (char *)extname, &status);
    for (int c = 0; c < ncols && !status; c++) {
        if (cols[c].description && cols[c].description[0]) {
            char key[24];
            snprintf(key, sizeof key, "TCOMM%d", c + 1);
            /* past 68 characters the text goes on in CONTINUE cards */
            fits_write_key_longstr(w->fp, key, (char *)cols[c].description, NULL, &status);
        }
        if (nrows > 0) {
            int type = cols[c].type == 'J' ? TINT : cols[c].type == 'E' ? TFLOAT : TDOUBLE;
            fits_write_col(w->fp, type, c + 1, 1, 1, (LONGLONG)nrows, (void *)cols[c].data, &status);
        }
    }
    int err = errno;
    free(ttype);
    free(tform);
    free(tunit);
    if (status) {
        st = writer_fail(w, status, err, "writing the table");
        pyr_fits_writer_abort(&w);
        return st;
    }
    return pyr_fits_writer_commit(&w);
}

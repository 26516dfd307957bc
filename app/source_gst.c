/* SPDX-License-Identifier: Apache-2.0 */
#if STEREO_HAVE_GST
#endif
